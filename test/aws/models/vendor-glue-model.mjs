/**
 * Writes glue-constraints.json: the shapes of the Glue requests the exporter sends, with their lengths, ranges,
 * patterns, enums and required members, from botocore's copy of the Glue service model. Rerun when the model
 * moves: node test/aws/models/vendor-glue-model.mjs <service-2.json> <botocore version> <commit>
 */
import { readFileSync, writeFileSync } from 'node:fs'

const [file, version, commit] = process.argv.slice(2)
if (!file || !version || !commit) throw new Error('usage: vendor-glue-model.mjs <service-2.json> <version> <commit>')
const model = JSON.parse(readFileSync(file, 'utf8'))
const OPERATIONS = ['GetTable', 'CreateTable', 'UpdateTable', 'GetDatabase']
const KEEP = ['type', 'min', 'max', 'pattern', 'enum', 'required']
const shapes = {}
const visit = (name) => {
  if (shapes[name] !== undefined) return
  const shape = model.shapes[name]
  const kept = Object.fromEntries(KEEP.filter((k) => shape[k] !== undefined).map((k) => [k, shape[k]]))
  shapes[name] = kept
  if (shape.members) {
    kept.members = Object.fromEntries(Object.entries(shape.members).map(([m, ref]) => [m, ref.shape]))
    for (const ref of Object.values(shape.members)) visit(ref.shape)
  }
  for (const part of ['member', 'key', 'value']) {
    if (shape[part]) {
      kept[part] = shape[part].shape
      visit(shape[part].shape)
    }
  }
}
const operations = Object.fromEntries(OPERATIONS.map((op) => [op, model.operations[op].input.shape]))
for (const input of Object.values(operations)) visit(input)
const sorted = Object.fromEntries(Object.entries(shapes).sort(([a], [b]) => a.localeCompare(b)))
const vendored = {
  source: `https://github.com/boto/botocore/blob/${commit}/botocore/data/glue/2017-03-31/service-2.json`,
  botocoreVersion: version,
  apiVersion: model.metadata.apiVersion,
  note: 'Shapes reachable from the operations below; documentation and output shapes dropped. Patterns are Smithy patterns: the service matches them against the whole value.',
  operations,
  shapes: sorted,
}
writeFileSync(new URL('./glue-constraints.json', import.meta.url), `${JSON.stringify(vendored, null, 2)}\n`)
