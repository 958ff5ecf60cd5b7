#!/usr/bin/env node
// Ground truth from the real Excalidraw editor, for one or more .excalidraw files.
//   node run.mjs INPUT.excalidraw [MORE.excalidraw ...] [--seed N] [--out FILE] [--pretty]
//                [--rebuild] [--no-logs] [--screenshot PNG]
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { openHarness } from './lib/browser.mjs'

function usage(msg) {
	if (msg) process.stderr.write(`error: ${msg}\n`)
	process.stderr.write(
		'usage: node run.mjs INPUT.excalidraw [MORE.excalidraw ...] [--seed N] [--out FILE] [--pretty]\n' +
			'       [--rebuild] [--no-logs] [--screenshot PNG]\n'
	)
	process.exit(2)
}

function parseArgs(argv) {
	const o = { inputs: [], pretty: false }
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i]
		const val = () => {
			if (a.includes('=')) return a.slice(a.indexOf('=') + 1)
			if (i + 1 >= argv.length) usage(`${a} needs a value`)
			return argv[++i]
		}
		switch (a.split('=')[0]) {
			case '--seed': {
				const n = Number(val())
				if (!Number.isInteger(n)) usage('--seed N (an integer)')
				o.seed = n
				break
			}
			case '--out':
				o.out = val()
				break
			case '--screenshot':
				o.screenshot = val()
				break
			case '--pretty':
				o.pretty = true
				break
			case '--rebuild':
				o.rebuild = true
				break
			case '--no-logs':
				o.noLogs = true
				break
			case '-h':
			case '--help':
				usage()
				break
			default:
				if (a.startsWith('--')) usage(`unknown option ${a}`)
				o.inputs.push(a)
		}
	}
	if (!o.inputs.length) usage('at least one INPUT.excalidraw is needed')
	return o
}

const opts = parseArgs(process.argv.slice(2))
const h = await openHarness({ rebuild: opts.rebuild, seed: opts.seed })
const files = []
let info
try {
	info = await h.page.evaluate(() => window.__harness.info())
	for (const input of opts.inputs) {
		const logStart = h.logs.length
		const blockedStart = h.blocked.length
		let entry
		try {
			const text = readFileSync(input, 'utf8')
			entry = await h.page.evaluate(([t]) => window.__harness.run(t), [text])
		} catch (e) {
			entry = { ok: false, load: { via: null, error: { name: e.name, message: String(e.message || e) } } }
		}
		entry = { input: resolve(input), ...entry }
		if (!opts.noLogs) {
			entry.consoleErrors = h.logs.slice(logStart)
			entry.blockedRequests = h.blocked.slice(blockedStart)
		}
		files.push(entry)
	}
	info.fonts = await h.page.evaluate(() => window.__harness.fonts())
	if (opts.screenshot) {
		await h.page.evaluate(() => window.excalidrawAPI.scrollToContent(undefined, { fitToContent: true }))
		await h.page.waitForTimeout(500)
		await h.page.screenshot({ path: opts.screenshot })
	}
} finally {
	await h.close()
}
const result = { ok: files.every((f) => f.ok), seed: opts.seed ?? null, ...info, files }
const text = JSON.stringify(result, null, opts.pretty ? 2 : 0) + '\n'
if (opts.out) writeFileSync(opts.out, text)
else process.stdout.write(text)
for (const f of files) {
	if (!f.ok) process.stderr.write(`failed to load ${f.input}: ${JSON.stringify(f.load && f.load.error)}\n`)
}
process.exit(result.ok ? 0 : 1)
