/** Errors in what the user gave: the configuration, the flags, a query, a warehouse folder not yet written to. */
import { FailureClass } from '../constants.ts'
import { ErrorCode } from './codes.ts'
import { ExportError } from './export-error.ts'

export interface ConfigProblem {
  readonly field: string
  readonly message: string
}

/** The configuration is invalid; `problems` names every offending field. */
export class ConfigError extends ExportError {
  readonly problems: readonly ConfigProblem[]
  /** What was invalid: a file, the flags, the Lambda environment. */
  readonly origin: string
  constructor(origin: string, problems: readonly ConfigProblem[], hint = 'fix the fields named above and start again') {
    const lines = problems.map((p) => `  - ${p.field}: ${p.message}`)
    super(ErrorCode.CONFIG_INVALID, FailureClass.CONFIG, [`invalid ${origin}:`, ...lines], { hint })
    this.problems = problems
    this.origin = origin
  }
}

/**
 * Bad command-line usage (exit 2). Only a problem with the flags themselves points at --help; a flag whose value
 * names something unusable (a missing file, a file where a folder belongs) gets a next step about that thing.
 */
export class UsageError extends ExportError {
  constructor(message: string, hint = 'run with --help for the list of flags') {
    super(ErrorCode.USAGE_INVALID, FailureClass.CONFIG, message, { hint })
  }
}

/** SQL the local warehouse could not run (`npm run query`): the statement is at fault, not the flags. */
export class QueryError extends ExportError {
  constructor(reason: string) {
    // The DATA class makes the runner exit 1: the command was used right, the SQL did not run. DuckDB's message
    // spans lines (the statement, a caret under the fault): joined, as the terminal always showed it.
    super(ErrorCode.QUERY_FAILED, FailureClass.DATA, `the query failed: ${reason.replace(/\s*\n\s*/g, ' ')}`, {
      hint: 'fix the SQL; tables and <name>_latest views go by their Athena names (SHOW TABLES lists them)',
    })
  }
}

/** `npm run query` or `npm run ddl` on a warehouse folder no export has written to yet. */
export class WarehouseEmptyError extends ExportError {
  constructor(root: string) {
    super(ErrorCode.WAREHOUSE_EMPTY, FailureClass.NOT_FOUND, `no table has been exported to ${root} yet`, {
      hint: 'export first: npm start (the demo), or npm start -- --config FILE; or point --out at the warehouse folder',
    })
  }
}
