/**
 * The titles a test file declares, read from its syntax tree rather than its text, so that a title left in a
 * comment, a string elsewhere or a skipped test does not count as tested. Used to keep lists of "scenario X is
 * tested in file Y" honest.
 */
import ts from 'typescript'

/** A declared describe/it/test: its title as written (a template such as '%s' or '$name' included) and its rows. */
export interface DeclaredTest {
  readonly title: string
  /** For `.each(rows)`: each row's label (its first element, or its `name`), where the rows are written literally. */
  readonly rows: readonly string[]
}

const RUNNERS = new Set(['describe', 'it', 'test'])
/** Modifiers that mean the body does not run, or runs expecting failure: such a test tests nothing. */
const NOT_RUN = new Set(['skip', 'todo', 'fails', 'skipIf', 'runIf'])

const textOf = (node: ts.Node | undefined): string | undefined =>
  node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined

const unwrap = (node: ts.Expression): ts.Expression =>
  ts.isAsExpression(node) || ts.isSatisfiesExpression(node) || ts.isParenthesizedExpression(node)
    ? unwrap(node.expression)
    : node

/** The labels of an `.each` table written as an array literal, here or in a const of the same file. */
const rowLabels = (table: ts.Expression | undefined, file: ts.SourceFile): string[] => {
  if (table === undefined) return []
  let node = unwrap(table)
  if (ts.isIdentifier(node)) {
    const name = node.text
    let found: ts.Expression | undefined
    const visit = (n: ts.Node): void => {
      if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === name) found = n.initializer
      else ts.forEachChild(n, visit)
    }
    visit(file)
    if (found === undefined) return []
    node = unwrap(found)
  }
  if (!ts.isArrayLiteralExpression(node)) return []
  return node.elements.flatMap((row) => {
    const element = unwrap(row as ts.Expression)
    if (ts.isArrayLiteralExpression(element)) return textOf(element.elements[0]) ?? []
    if (ts.isObjectLiteralExpression(element)) {
      const name = element.properties.find(
        (p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText(file) === 'name',
      )
      return textOf(name?.initializer) ?? []
    }
    return []
  })
}

/** The runner a callee names (`it`, `it.each(rows)`, `describe.concurrent`...), or undefined if it is not one that runs. */
const runnerOf = (callee: ts.Expression, file: ts.SourceFile): { rows: string[] } | undefined => {
  let rows: string[] = []
  let node = callee
  if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
    if (node.expression.name.text !== 'each') return undefined
    rows = rowLabels(node.arguments[0], file)
    node = node.expression.expression
  }
  while (ts.isPropertyAccessExpression(node)) {
    if (NOT_RUN.has(node.name.text)) return undefined
    node = node.expression
  }
  return ts.isIdentifier(node) && RUNNERS.has(node.text) ? { rows } : undefined
}

/** Every describe, it and test the source declares with a literal title, skipped ones left out. */
export const declaredTests = (source: string, fileName = 'test.ts'): DeclaredTest[] => {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true)
  const found: DeclaredTest[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const title = textOf(node.arguments[0])
      const runner = runnerOf(node.expression, file)
      if (title !== undefined && runner !== undefined) found.push({ title, rows: runner.rows })
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}
