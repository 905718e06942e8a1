/**
 * catalog/glue-rules.ts is the fast first line; the Glue API model (vendored from botocore) is the authority. At
 * every length limit the model states for a field the rules check, and for characters at the edges of Glue's
 * single-line pattern, the two must agree on what Glue refuses. A limit typed wrong in the rules fails here.
 */
import type { TableInput } from '@aws-sdk/client-glue'
import { describe, expect, it } from 'vitest'
import { glueTableInputProblems } from '../../functions/export/catalog/glue-rules.ts'
import { GLUE_MODEL, glueRequestProblems, glueShape } from './glue-model.ts'

const table = (): TableInput => ({
  Name: 'devices',
  TableType: 'EXTERNAL_TABLE',
  Parameters: { classification: 'parquet' },
  PartitionKeys: [{ Name: 'dt', Type: 'string' }],
  StorageDescriptor: {
    Columns: [{ Name: 'hostname', Type: 'string', Comment: 'the host' }],
    Location: 's3://warehouse/inventory/devices/',
    InputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
    SerdeInfo: { SerializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe' },
  },
})

/** A field the rules check, the model shape that governs it, and how to put a value of a given length there. */
const FIELDS: [string, string, (input: TableInput, text: string) => void][] = [
  ['the table name', 'NameString', (t, v) => (t.Name = v)],
  ['a column name', 'NameString', (t, v) => (t.StorageDescriptor!.Columns![0]!.Name = v)],
  ['a partition key name', 'NameString', (t, v) => (t.PartitionKeys![0]!.Name = v)],
  ['a column comment', 'CommentString', (t, v) => (t.StorageDescriptor!.Columns![0]!.Comment = v)],
  ['a column type', 'ColumnTypeString', (t, v) => (t.StorageDescriptor!.Columns![0]!.Type = v)],
  ['a parameter key', 'KeyString', (t, v) => (t.Parameters = { [v]: 'x' })],
  ['a parameter value', 'ParametersMapValue', (t, v) => (t.Parameters = { classification: v })],
  ['the location', 'LocationString', (t, v) => (t.StorageDescriptor!.Location = `s3://${v}`.slice(0, v.length))],
  ['the input format', 'FormatString', (t, v) => (t.StorageDescriptor!.InputFormat = v)],
  ['the SerDe', 'NameString', (t, v) => (t.StorageDescriptor!.SerdeInfo!.SerializationLibrary = v)],
]

const LENGTH = /characters long|longer than|exceeds/
const refusesLength = (input: TableInput) => ({
  rules: glueTableInputProblems(input).some((p) => LENGTH.test(p)),
  model: glueRequestProblems('CreateTable', { DatabaseName: 'inventory', TableInput: input }).some((p) =>
    p.includes('Member must have length'),
  ),
})

describe(`glue-rules.ts against the Glue API model (botocore ${GLUE_MODEL.botocoreVersion})`, () => {
  it.each(FIELDS)('agree on the longest %s Glue takes (%s) and one character more', (_what, shapeName, set) => {
    const { min = 0, max } = glueShape(shapeName)
    expect(max).toBeGreaterThan(0)
    const lengths = [max!, max! + 1, ...(min > 0 ? [min - 1] : [])]
    const verdicts = lengths.map((n) => {
      const input = table()
      set(input, 'a'.repeat(n))
      return { n, ...refusesLength(input) }
    })
    // The model's own verdicts first, so a failure shows which side moved.
    expect(verdicts.map(({ n, model }) => ({ n, model }))).toEqual(
      lengths.map((n) => ({ n, model: n > max! || n < min })),
    )
    expect(verdicts.map(({ n, rules }) => ({ n, rules }))).toEqual(
      verdicts.map(({ n, model }) => ({ n, rules: model })),
    )
  })

  it.each([
    ['a tab', '\t', false],
    ['a line feed', '\n', true],
    ['a NUL', '\u0000', true],
    ['U+FFFE', '\uFFFE', true],
    ['a lone high surrogate', '\uD800', true],
    ['an accented letter', 'é', false],
    ['an emoji (an astral code point)', '\u{1F600}', false],
  ])("agree on whether Glue's single-line pattern takes %s in a comment", (_what, character, refused) => {
    const input = table()
    input.StorageDescriptor!.Columns![0]!.Comment = `host ${character} name`
    const model = glueRequestProblems('CreateTable', { DatabaseName: 'inventory', TableInput: input })
    const rules = glueTableInputProblems(input)
    expect(model.some((p) => p.includes('regular expression pattern'))).toBe(refused)
    expect(rules.some((p) => p.includes('pattern rejects'))).toBe(refused)
  })

  it('finds nothing to refuse in the table both take', () => {
    expect(glueRequestProblems('CreateTable', { DatabaseName: 'inventory', TableInput: table() })).toEqual([])
    expect(glueTableInputProblems(table())).toEqual([])
  })
})
