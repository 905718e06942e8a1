/** The CSV parse stage with its records as they come, for tests of the parser on its own. */
import { openCsvWith, type ParsedCsv, type ParseOptions } from '../../functions/export/csv/parse.ts'

export const openCsv = (source: AsyncIterable<Buffer>, options: ParseOptions): Promise<ParsedCsv> =>
  openCsvWith(source, options, (record) => record)
