#!/usr/bin/env node
// What Excalidraw's own Mermaid import (@excalidraw/mermaid-to-excalidraw, the version
// @excalidraw/excalidraw depends on) makes of Mermaid flowcharts, in the real editor.
//   node mermaid.mjs INPUT.mmd [MORE.mmd ...] [--seed N] [--out FILE] [--pretty] [--rebuild]
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { openHarness } from './lib/browser.mjs'

const args = process.argv.slice(2)
const opts = { inputs: [], pretty: false, seed: null }
for (let i = 0; i < args.length; i++) {
	const a = args[i]
	if (a === '--pretty') opts.pretty = true
	else if (a === '--rebuild') opts.rebuild = true
	else if (a === '--out') opts.out = args[++i]
	else if (a === '--seed') opts.seed = Number(args[++i])
	else if (a.startsWith('--')) {
		process.stderr.write(`unknown option ${a}\n`)
		process.exit(2)
	} else opts.inputs.push(a)
}
if (!opts.inputs.length) {
	process.stderr.write('usage: node mermaid.mjs INPUT.mmd [MORE.mmd ...] [--seed N] [--out FILE] [--pretty]\n')
	process.exit(2)
}
const h = await openHarness({ rebuild: opts.rebuild, seed: opts.seed })
const files = []
let info
try {
	info = await h.page.evaluate(() => window.__harness.info())
	for (const input of opts.inputs) {
		const logStart = h.logs.length
		const text = readFileSync(input, 'utf8')
		const entry = await h.page.evaluate(([t]) => window.__harness.mermaid(t), [text])
		files.push({ input: resolve(input), ...entry, consoleErrors: h.logs.slice(logStart) })
	}
	info.mermaidVersion = await h.page.evaluate(() => window.__harness.info().packageVersions['@excalidraw/mermaid-to-excalidraw'])
} finally {
	await h.close()
}
const result = { ok: files.every((f) => f.ok), ...info, blockedRequests: h.blocked, files }
const out = JSON.stringify(result, null, opts.pretty ? 2 : 0) + '\n'
if (opts.out) writeFileSync(opts.out, out)
else process.stdout.write(out)
process.exit(result.ok ? 0 : 1)
