// Builds the live page from this folder's sources: the two editor bundles (esbuild), the
// page template, and the editors' own fonts, icons and translations copied from their npm
// packages, so the page fetches nothing from anywhere but the server that serves it.
//
//   node build.mjs [--out DIR] [--all-fonts]
//
// DIR defaults to dist/. Excalidraw's CJK font (Xiaolai, 13 MB) is left out unless
// --all-fonts is given: text in it is drawn with the system's fallback font.
import * as esbuild from 'esbuild'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const outArg = args.indexOf('--out')
const out = resolve(outArg >= 0 ? args[outArg + 1] : join(here, 'dist'))
const allFonts = args.includes('--all-fonts')
const nm = join(here, 'node_modules')

const version = (name) => JSON.parse(readFileSync(join(nm, name, 'package.json'), 'utf8')).version

function size(dir) {
	let n = 0
	for (const f of readdirSync(dir)) {
		const p = join(dir, f)
		n += statSync(p).isDirectory() ? size(p) : statSync(p).size
	}
	return n
}

export async function build() {
	if (!existsSync(join(nm, 'tldraw'))) throw new Error(`no node_modules in ${here}: run npm ci there first`)
	rmSync(out, { recursive: true, force: true })
	const assets = join(out, 'assets')
	mkdirSync(assets, { recursive: true })
	const result = await esbuild.build({
		entryPoints: { tldraw: join(here, 'page/src/tldraw.jsx'), excalidraw: join(here, 'page/src/excalidraw.jsx') },
		outdir: assets,
		bundle: true,
		splitting: true,
		chunkNames: "chunks/[name]-[hash]",
		format: 'esm',
		platform: 'browser',
		target: 'es2022',
		jsx: 'automatic',
		minify: true,
		sourcemap: false,
		legalComments: 'linked',
		logLevel: 'error',
		metafile: true,
		conditions: ['production'],
		loader: { '.woff2': 'file', '.woff': 'file', '.ttf': 'file', '.svg': 'file', '.png': 'file' },
		define: { 'process.env.NODE_ENV': '"production"', 'process.env.IS_PREACT': '"false"' },
	})
	// tldraw's self-hosted assets (getAssetUrls({baseUrl})) and Excalidraw's fonts (EXCALIDRAW_ASSET_PATH)
	for (const d of ['fonts', 'icons', 'translations', 'embed-icons']) {
		cpSync(join(nm, '@tldraw/assets', d), join(assets, 'tldraw', d), { recursive: true })
	}
	const exFonts = join(nm, '@excalidraw/excalidraw/dist/prod/fonts')
	for (const f of readdirSync(exFonts)) {
		if (f === 'Xiaolai' && !allFonts) continue
		cpSync(join(exFonts, f), join(assets, 'excalidraw', 'fonts', f), { recursive: true })
	}
	cpSync(join(here, 'page/live.html'), join(out, 'live.html'))
	const bytes = (f) => (existsSync(join(assets, f)) ? statSync(join(assets, f)).size : 0)
	// what a page loads before the editor runs: its entry and every chunk it imports statically
	const outs = result.metafile.outputs
	const key = (f) => Object.keys(outs).find((k) => resolve(k) === resolve(join(assets, f)))
	const initial = (f) => {
		const seen = new Set()
		const walk = (k) => {
			if (!k || seen.has(k)) return
			seen.add(k)
			for (const imp of outs[k].imports || []) if (imp.kind === 'import-statement') walk(imp.path)
		}
		walk(key(f))
		let n = 0
		for (const k of seen) n += outs[k].bytes
		return n
	}
	const manifest = {
		name: 'spatialobs-live-page',
		versions: { tldraw: version('tldraw'), '@excalidraw/excalidraw': version('@excalidraw/excalidraw'), react: version('react') },
		bundles: {
			tldraw: { js: bytes('tldraw.js'), initialJs: initial('tldraw.js'), css: bytes('tldraw.css') },
			excalidraw: { js: bytes('excalidraw.js'), initialJs: initial('excalidraw.js'), css: bytes('excalidraw.css') },
		},
		assets: { tldraw: size(join(assets, 'tldraw')), excalidraw: size(join(assets, 'excalidraw')) },
		total: size(out),
		outputs: Object.keys(result.metafile.outputs).length,
	}
	writeFileSync(join(out, 'manifest.json'), JSON.stringify(manifest, null, 1) + '\n')
	return manifest
}

if (import.meta.url === `file://${process.argv[1]}`) {
	const m = await build()
	const mb = (n) => `${(n / 1e6).toFixed(2)} MB`
	console.log(`live page built in ${out}: tldraw ${mb(m.bundles.tldraw.initialJs)}, excalidraw ${mb(m.bundles.excalidraw.initialJs)} of JS before the editor runs (minified), ${mb(m.total)} in all`)
}
