// Launcher: serves dist/ and Excalidraw's own fonts from 127.0.0.1 and opens the harness
// page in headless Chromium (system /usr/bin/chromium, fresh profile). Every request to
// another host is blocked and listed.
import { chromium } from 'playwright-core'
import { createServer } from 'node:http'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, extname, join, normalize, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from '../build.mjs'

const here = dirname(dirname(fileURLToPath(import.meta.url)))

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium'
export const CHROMIUM_ARGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
	'--disable-dev-shm-usage',
]

const TYPES = {
	'.html': 'text/html; charset=utf-8',
	'.js': 'text/javascript; charset=utf-8',
	'.css': 'text/css; charset=utf-8',
	'.json': 'application/json',
	'.svg': 'image/svg+xml',
	'.png': 'image/png',
	'.woff2': 'font/woff2',
	'.woff': 'font/woff',
}

function startServer() {
	const roots = [
		['/excalidraw-assets/', join(here, 'node_modules/@excalidraw/excalidraw/dist/prod')],
		['/', join(here, 'dist')],
	]
	const server = createServer((req, res) => {
		const url = new URL(req.url, 'http://127.0.0.1')
		let pathname = decodeURIComponent(url.pathname)
		if (pathname === '/') pathname = '/index.html'
		for (const [prefix, root] of roots) {
			if (!pathname.startsWith(prefix)) continue
			const file = normalize(join(root, pathname.slice(prefix.length)))
			if (!file.startsWith(root + sep)) break
			if (!existsSync(file) || !statSync(file).isFile()) break
			res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream', 'cache-control': 'no-store' })
			res.end(readFileSync(file))
			return
		}
		res.writeHead(404, { 'content-type': 'text/plain' })
		res.end('not found')
	})
	return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

// Seeded stand-in for Math.random, crypto.getRandomValues and crypto.randomUUID, installed
// before any page script runs (only with --seed), so ids, seeds and nonces that restore
// invents are repeatable. A 32-bit counter passed through an integer mixing function.
function installSeededRandom(seed) {
	let state = seed >>> 0
	const next = () => {
		state = (state + 0x9e3779b9) >>> 0
		let z = state
		z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
		z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
		return ((z ^ (z >>> 16)) >>> 0) / 4294967296
	}
	Math.random = next
	const fill = (arr) => {
		const bytes = new Uint8Array(arr.buffer, arr.byteOffset, arr.byteLength)
		for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(next() * 256)
		return arr
	}
	crypto.getRandomValues = fill
	crypto.randomUUID = () => {
		const b = fill(new Uint8Array(16))
		b[6] = (b[6] & 0x0f) | 0x40
		b[8] = (b[8] & 0x3f) | 0x80
		const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')
		return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
	}
}

/**
 * Opens the harness page; returns { page, logs, blocked, close }.
 * opts: { width, height, rebuild, seed }
 */
export async function openHarness({ width = 1280, height = 800, rebuild = false, seed = null } = {}) {
	if (rebuild || !existsSync(join(here, 'dist/page.js'))) await build({ quiet: true })
	const server = await startServer()
	const port = server.address().port
	const profile = mkdtempSync(join(tmpdir(), 'excalidraw-harness-profile-'))
	let context
	const cleanup = async () => {
		try {
			if (context) await context.close()
		} catch {}
		await new Promise((r) => server.close(r))
		rmSync(profile, { recursive: true, force: true })
	}
	try {
		// launchPersistentContext passes --user-data-dir=<profile> (a fresh temp dir)
		context = await chromium.launchPersistentContext(profile, {
			executablePath: CHROMIUM,
			headless: true,
			args: CHROMIUM_ARGS,
			viewport: { width, height },
			deviceScaleFactor: 1,
			timeout: 60000,
		})
		const logs = []
		const blocked = []
		await context.route('**/*', (route) => {
			const u = new URL(route.request().url())
			if (u.protocol === 'data:' || u.protocol === 'blob:' || u.hostname === '127.0.0.1') return route.continue()
			blocked.push(u.href)
			return route.abort()
		})
		if (seed != null) await context.addInitScript(installSeededRandom, seed)
		const page = context.pages()[0] || (await context.newPage())
		page.on('console', (m) => {
			if (m.type() === 'error' || m.type() === 'warning') logs.push(`${m.type()}: ${m.text()}`)
		})
		page.on('pageerror', (e) => logs.push(`pageerror: ${e.message}`))
		await page.goto(`http://127.0.0.1:${port}/index.html`)
		await page.waitForFunction(() => window.__harness && window.__harness.isReady(), null, { timeout: 60000 })
		return { page, logs, blocked, close: cleanup }
	} catch (e) {
		await cleanup()
		throw e
	}
}
