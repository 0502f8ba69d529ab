// Times @cucumber/gherkin on the same files, in the same way, as Saffron's parse benchmark:
// every file parsed from memory into a GherkinDocument, repeated; prints one JSON line.
// Usage: node parse-gherkin.mjs <warmup> <iterations> <file>...
import { readFileSync } from 'node:fs'
import { AstBuilder, GherkinClassicTokenMatcher, Parser } from '@cucumber/gherkin'
import { IdGenerator } from '@cucumber/messages'

const [warmup, iterations, ...files] = process.argv.slice(2)
const sources = files.map((file) => readFileSync(file, 'utf8'))

function parseAll() {
  let steps = 0
  for (const source of sources) {
    const parser = new Parser(new AstBuilder(IdGenerator.incrementing()), new GherkinClassicTokenMatcher())
    const document = parser.parse(source)
    for (const child of document.feature?.children ?? []) {
      steps += child.background?.steps.length ?? 0
      steps += child.scenario?.steps.length ?? 0
      for (const ruleChild of child.rule?.children ?? []) {
        steps += ruleChild.background?.steps.length ?? 0
        steps += ruleChild.scenario?.steps.length ?? 0
      }
    }
  }
  return steps
}

for (let i = 0; i < Number(warmup); i++) parseAll()
const timesMs = []
let steps = 0
for (let i = 0; i < Number(iterations); i++) {
  const start = process.hrtime.bigint()
  steps = parseAll()
  timesMs.push(Number(process.hrtime.bigint() - start) / 1e6)
}
process.stdout.write(JSON.stringify({ tool: '@cucumber/gherkin', timesMs, steps }) + '\n')
