// Bundles src/page.jsx (the real <Excalidraw> component and its data API) into dist/ with esbuild.
// Usage: node build.mjs
import * as esbuild from 'esbuild'
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))

export function packageVersions() {
	const v = (name) => {
		try {
			return JSON.parse(readFileSync(join(here, 'node_modules', name, 'package.json'), 'utf8')).version
		} catch {
			return null
		}
	}
	return Object.fromEntries(['@excalidraw/excalidraw', '@excalidraw/mermaid-to-excalidraw', 'mermaid', 'react', 'react-dom', 'roughjs'].map((n) => [n, v(n)]))
}

export async function build({ quiet = false } = {}) {
	const dist = join(here, 'dist')
	mkdirSync(dist, { recursive: true })
	await esbuild.build({
		entryPoints: { page: join(here, 'src/page.jsx') },
		outdir: dist,
		bundle: true,
		format: 'esm',
		// the Mermaid package (and Mermaid) load only when a flowchart is converted
		splitting: true,
		chunkNames: 'chunks/[name]-[hash]',
		platform: 'browser',
		target: 'es2022',
		jsx: 'automatic',
		minify: false,
		sourcemap: false,
		logLevel: quiet ? 'error' : 'info',
		// the package's "production" export condition, as an app build would pick it
		conditions: ['production'],
		loader: { '.woff2': 'file', '.woff': 'file', '.svg': 'file', '.png': 'file' },
		define: {
			'process.env.NODE_ENV': '"production"',
			'process.env.IS_PREACT': '"false"',
			__PKG_VERSIONS__: JSON.stringify(packageVersions()),
		},
	})
	copyFileSync(join(here, 'src/index.html'), join(dist, 'index.html'))
}

if (import.meta.url === `file://${process.argv[1]}`) {
	await build()
}
