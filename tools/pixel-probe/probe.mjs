#!/usr/bin/env node
// Pixel truth for occlusion: renders a page in the real tldraw or Excalidraw editor and
// measures, for every shape in view, how many of its own pixels a person still sees.
//
//   node probe.mjs --editor tldraw|excalidraw --harness DIR INPUT [MORE ...] [--window W,H] [--min-zoom Z] [--shift PX] [--out FILE]
//
// One render does not show what lies under a shape, and one render per shape is slow, so
// shapes are rendered in passes: a pass holds shapes whose padded screen boxes are pairwise
// disjoint, drawn alone (every other shape hidden, opacity forced to 1) on a transparent
// background. Each pixel's alpha then belongs to one shape, so a few passes give every
// shape's own coverage a_s (0..1). The page's composite follows from the renderers' own
// compositing (source-over): shape s shows at pixel p with weight a_s(p) * prod over higher
// shapes h of (1 - a_h(p) * opacity_h). Here a pixel is a shape's own where its coverage is
// at least half (a_s >= 0.5, so antialiased fringes belong to nobody and an exact copy drawn
// on top covers every pixel of the one below), and it is visible when the shapes above that
// own it let through more than 0.1: prod (1 - opacity_h) > 0.1 (a cover at the observation's
// min_opacity 0.9 lets through exactly 0.1). Per shape: own and visible pixel counts. Frames clip their children in both editors as they render them.
//
// tldraw: the DOM renderer; each shape is one .tl-shape element (and a background one),
// hidden or shown with CSS, and the page is captured with Chromium's screenshot.
// Excalidraw: its own exportToCanvas, with the elements not in the pass at opacity 0 (so
// the canvas keeps the same extent), read back with getImageData.
//
// Large pages are cut into tiles at zoom max(fit, --min-zoom); tiles with no shape are skipped.
// --shift PX moves every view by PX screen pixels right and down (0 <= PX < 1): the same page
// under a pixel grid that falls elsewhere, to tell which shapes' pixels hang on where it falls.
// Output: {editor, input, unordered: [ids whose paint order tldraw chose at random on load], views: [{page, viewport {x,y,w,h} (page units), zoom, shapes: [{id, own, visible}]}]}
// for one INPUT; for several, {editor, files: [that object for each INPUT]}, from one browser session.
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { inflateSync } from 'node:zlib'

function usage(msg) {
	if (msg) process.stderr.write(`error: ${msg}\n`)
	process.stderr.write('usage: node probe.mjs --editor tldraw|excalidraw --harness DIR INPUT [MORE ...] [--window W,H] [--min-zoom Z] [--shift PX] [--out FILE]\n')
	process.exit(2)
}

function parseArgs(argv) {
	const o = { window: [1600, 1000], minZoom: 0.25, pad: 8, shift: 0 }
	const rest = []
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i]
		const val = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`))
		if (a === '--editor') o.editor = val()
		else if (a === '--harness') o.harness = val()
		else if (a === '--out') o.out = val()
		else if (a === '--window') o.window = val().split(',').map(Number)
		else if (a === '--min-zoom') o.minZoom = Number(val())
		else if (a === '--pad') o.pad = Number(val())
		else if (a === '--shift') o.shift = Number(val())
		else if (a.startsWith('--')) usage(`unknown option ${a}`)
		else rest.push(a)
	}
	if (!['tldraw', 'excalidraw'].includes(o.editor)) usage('--editor tldraw|excalidraw')
	if (!o.harness) usage('--harness DIR (an installed harness)')
	if (!rest.length) usage('at least one INPUT')
	if (o.window.length !== 2 || !o.window.every((v) => Number.isInteger(v) && v > 0)) usage('--window W,H')
	if (!(o.minZoom > 0)) usage('--min-zoom > 0')
	if (!(o.shift >= 0 && o.shift < 1)) usage('--shift PX with 0 <= PX < 1')
	o.inputs = rest
	return o
}

// ---------------------------------------------------------------------------- PNG (8-bit RGBA)
function pngAlpha(buf) {
	let pos = 8
	let w = 0
	let h = 0
	const idat = []
	while (pos < buf.length) {
		const len = buf.readUInt32BE(pos)
		const type = buf.toString('latin1', pos + 4, pos + 8)
		const data = buf.subarray(pos + 8, pos + 8 + len)
		if (type === 'IHDR') {
			w = data.readUInt32BE(0)
			h = data.readUInt32BE(4)
			if (data[8] !== 8 || data[9] !== 6 || data[12] !== 0) throw new Error('expected an 8-bit RGBA PNG, not interlaced')
		} else if (type === 'IDAT') idat.push(data)
		else if (type === 'IEND') break
		pos += 12 + len
	}
	const raw = inflateSync(Buffer.concat(idat))
	const stride = w * 4
	const out = new Uint8Array(w * h * 4)
	for (let y = 0; y < h; y++) {
		const f = raw[y * (stride + 1)]
		const src = y * (stride + 1) + 1
		const row = y * stride
		const up = row - stride
		for (let x = 0; x < stride; x++) {
			const r = raw[src + x]
			const a = x >= 4 ? out[row + x - 4] : 0
			const b = y > 0 ? out[up + x] : 0
			const c = x >= 4 && y > 0 ? out[up + x - 4] : 0
			let v
			if (f === 0) v = r
			else if (f === 1) v = r + a
			else if (f === 2) v = r + b
			else if (f === 3) v = r + ((a + b) >> 1)
			else {
				const p = a + b - c
				const pa = Math.abs(p - a)
				const pb = Math.abs(p - b)
				const pc = Math.abs(p - c)
				v = r + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)
			}
			out[row + x] = v & 255
		}
	}
	const alpha = new Uint8Array(w * h)
	for (let i = 0; i < w * h; i++) alpha[i] = out[i * 4 + 3]
	return { w, h, alpha }
}

// ---------------------------------------------------------------------------- shared
// Greedy passes: each shape joins the first pass where its padded box meets no member's.
function passesOf(items) {
	const passes = []
	for (const it of items) {
		let placed = false
		for (const p of passes) {
			if (p.boxes.every((b) => b[2] <= it.r[0] || it.r[2] <= b[0] || b[3] <= it.r[1] || it.r[3] <= b[1])) {
				p.items.push(it)
				p.boxes.push(it.r)
				placed = true
				break
			}
		}
		if (!placed) passes.push({ items: [it], boxes: [it.r] })
	}
	return passes
}

// items: [{id, order, opacity, r: [x0,y0,x1,y1] screen px, crop: Uint8Array alpha of r}], W x H
function composite(items, W, H) {
	const T = new Float32Array(W * H).fill(1)
	const out = new Map()
	const sorted = [...items].sort((a, b) => b.order - a.order)
	for (const it of sorted) {
		const [x0, y0, x1, y1] = it.r
		const rw = x1 - x0
		let own = 0
		let vis = 0
		for (let y = y0; y < y1; y++) {
			for (let x = x0; x < x1; x++) {
				const a = it.crop[(y - y0) * rw + (x - x0)]
				if (!a) continue
				const k = y * W + x
				if (a >= 128) {
					own++
					if (T[k] > 0.1) vis++
					T[k] *= 1 - it.opacity
				}
			}
		}
		out.set(it.id, { own, visible: vis })
	}
	return items.map((it) => ({ id: it.id, ...out.get(it.id) }))
}

function tiles(bounds, W, H, minZoom, shift = 0) {
	const [bx, by, bw, bh] = bounds
	const fit = Math.min(W / Math.max(bw, 1), H / Math.max(bh, 1), 1)
	const z = Math.max(fit, minZoom)
	const tw = W / z
	const th = H / z
	const nx = Math.max(1, Math.ceil(bw / tw))
	const ny = Math.max(1, Math.ceil(bh / th))
	// one tile: center the page; several: a grid from the page's corner
	const ox = (nx === 1 ? bx + bw / 2 - tw / 2 : bx) - shift / z
	const oy = (ny === 1 ? by + bh / 2 - th / 2 : by) - shift / z
	const out = []
	for (let j = 0; j < ny; j++) for (let i = 0; i < nx; i++) out.push({ x: ox + i * tw, y: oy + j * th, w: tw, h: th, z })
	return out
}

const meets = (b, v) => b[0] <= v.x + v.w && b[0] + b[2] >= v.x && b[1] <= v.y + v.h && b[1] + b[3] >= v.y

function screenRect(b, v, pad, W, H) {
	const x0 = Math.max(0, Math.floor((b[0] - v.x) * v.z) - pad)
	const y0 = Math.max(0, Math.floor((b[1] - v.y) * v.z) - pad)
	const x1 = Math.min(W, Math.ceil((b[0] + b[2] - v.x) * v.z) + pad)
	const y1 = Math.min(H, Math.ceil((b[1] + b[3] - v.y) * v.z) + pad)
	return [x0, y0, Math.max(x0, x1), Math.max(y0, y1)]
}

function cropOf(alpha, W, r) {
	const [x0, y0, x1, y1] = r
	const rw = x1 - x0
	const c = new Uint8Array(rw * (y1 - y0))
	for (let y = y0; y < y1; y++) c.set(alpha.subarray(y * W + x0, y * W + x1), (y - y0) * rw)
	return c
}

// ---------------------------------------------------------------------------- tldraw
const TL_STYLE = `
html, body, #root, .tl-container, .tl-canvas { background: transparent !important; }
.tl-background, .tl-background__wrapper, .tl-grid, .tlui-layout, .tl-overlays, .tl-watermark_SEE-LICENSE,
[class*="watermark"], .tl-html-layer.tl-overlays, .tl-cursor, .tl-collaborator__cursor { display: none !important; }
.tl-shape { visibility: hidden !important; opacity: 1 !important; }
`

async function probeTldraw(opts) {
	const { openHarness } = await import(pathToFileURL(join(resolve(opts.harness), 'lib/browser.mjs')).href)
	const [W, H] = opts.window
	const h = await openHarness({ width: W, height: H, seed: 1 })
	const files = []
	let cdp = null
	try {
		for (const input of opts.inputs) files.push(await probeTldrawFile(opts, h, input, W, H, cdp || (cdp = await setUpTldraw(h))))
	} finally {
		await h.close()
	}
	return files
}

async function setUpTldraw(h) {
	await h.page.addStyleTag({ content: TL_STYLE })
	const cdp = await h.page.context().newCDPSession(h.page)
	await cdp.send('Emulation.setDefaultBackgroundColorOverride', { color: { r: 0, g: 0, b: 0, a: 0 } })
	await h.page.evaluate(() => document.head.appendChild(Object.assign(document.createElement('style'), { id: 'probe-pass' })))
	return cdp
}

async function probeTldrawFile(opts, h, input, W, H, cdp) {
	// shapes whose paint order the file does not fix (tldraw replaced their invalid index keys with random ones)
	const unordered = []
	const views = []
	{
		const text = readFileSync(input, 'utf8')
		const loaded = await h.page.evaluate(
			([t, W, H]) =>
				window.__harness.run(t, { viewport: [W, H], page: 'first' }).then((r) => ({
					ok: r.ok,
					error: r.ok ? null : r.load || null,
					rewritten: ((r.load && r.load.indexKeysRewritten) || []).map((x) => x.id),
				})),
			[text, W, H]
		)
		if (!loaded.ok) throw new Error(`tldraw could not load ${input}: ${JSON.stringify(loaded.error)}`)
		unordered.push(...loaded.rewritten)
		const pages = await h.page.evaluate(() => window.editor.getPages().map((p) => ({ id: p.id, name: p.name })))
		for (const pg of pages) {
			const info = await h.page.evaluate((pid) => {
				const ed = window.editor
				ed.setCurrentPage(pid)
				const op = new Map(ed.getRenderingShapes().map((r) => [r.id, r.opacity]))
				const shapes = ed.getCurrentPageShapesSorted().map((s, i) => {
					const b = ed.getShapeMaskedPageBounds(s.id)
					return { id: s.id, type: s.type, order: i, opacity: op.get(s.id) ?? 0, b: b ? [b.x, b.y, b.w, b.h] : null }
				})
				const pb = ed.getCurrentPageBounds()
				return { shapes, bounds: pb ? [pb.x, pb.y, pb.w, pb.h] : null }
			}, pg.id)
			if (!info.bounds) continue
			const live = info.shapes.filter((s) => s.b && s.opacity > 0)
			for (const v of tiles(info.bounds, W, H, opts.minZoom, opts.shift)) {
				const inView = live.filter((s) => meets(s.b, v))
				if (!inView.length) continue
				const vp = await h.page.evaluate(async (v) => {
					const ed = window.editor
					ed.setCamera({ x: -v.x, y: -v.y, z: v.z }, { force: true, immediate: true })
					if (ed.fonts && ed.fonts.loadRequiredFontsForCurrentPage) await ed.fonts.loadRequiredFontsForCurrentPage()
					await document.fonts.ready
					const b = ed.getViewportPageBounds()
					return { x: b.x, y: b.y, w: b.w, h: b.h, z: ed.getZoomLevel() }
				}, v)
				const items = inView.map((s) => ({ ...s, r: screenRect(s.b, vp, opts.pad, W, H) })).filter((s) => s.r[2] > s.r[0] && s.r[3] > s.r[1])
				const passes = passesOf(items)
				for (const pass of passes) {
					const css = pass.items.map((s) => `.tl-shape[data-shape-id=${JSON.stringify(s.id)}]`).join(',\n')
					await h.page.evaluate((css) => {
						document.getElementById('probe-pass').textContent = `${css} { visibility: visible !important; }`
						return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))
					}, css)
					// Chromium's own capture, with a transparent page background and fast PNG encoding
					const shot = await cdp.send('Page.captureScreenshot', { format: 'png', optimizeForSpeed: true })
					const png = Buffer.from(shot.data, 'base64')
					if (process.env.PROBE_DEBUG) writeFileSync(`${process.env.PROBE_DEBUG}-${views.length}-${passes.indexOf(pass)}.png`, png)
					const { w, alpha } = pngAlpha(png)
					for (const s of pass.items) s.crop = cropOf(alpha, w, s.r)
				}
				views.push({ page: pg.id, viewport: { x: vp.x, y: vp.y, w: vp.w, h: vp.h }, zoom: vp.z, passes: passes.length, shapes: composite(items, W, H) })
			}
		}
	}
	return { input: resolve(input), unordered, views }
}

// ---------------------------------------------------------------------------- Excalidraw
async function probeExcalidraw(opts) {
	const { openHarness } = await import(pathToFileURL(join(resolve(opts.harness), 'lib/browser.mjs')).href)
	const [W, H] = opts.window
	const h = await openHarness({ width: 800, height: 600, seed: 1 })
	const files = []
	try {
		const ok = await h.page.evaluate(() => typeof window.__harness.probeScene === 'function')
		if (!ok) throw new Error('this Excalidraw harness has no probeScene: rebuild it from tools/excalidraw-harness')
		for (const input of opts.inputs) files.push(await probeExcalidrawFile(opts, h, input, W, H))
	} finally {
		await h.close()
	}
	return files
}

async function probeExcalidrawFile(opts, h, input, W, H) {
	const views = []
	{
		const text = readFileSync(input, 'utf8')
		const scene = await h.page.evaluate((t) => window.__harness.probeScene(t), text)
		if (!scene.ok) throw new Error(`Excalidraw could not load ${input}: ${scene.error}`)
		const live = scene.elements.filter((e) => e.b && e.opacity > 0)
		for (const v of tiles(scene.bounds, W, H, opts.minZoom, opts.shift)) {
			const inView = live.filter((e) => meets(e.b, v))
			if (!inView.length) continue
			const items = inView.map((e) => ({ ...e, r: screenRect(e.b, v, opts.pad, W, H) })).filter((e) => e.r[2] > e.r[0] && e.r[3] > e.r[1])
			const passes = passesOf(items)
			for (const pass of passes) {
				const ids = pass.items.map((e) => e.id)
				const res = await h.page.evaluate(([ids, v, W, H]) => window.__harness.probePass(ids, v, W, H), [ids, v, W, H])
				const alpha = Buffer.from(res, 'base64')
				if (process.env.PROBE_DEBUG) writeFileSync(`${process.env.PROBE_DEBUG}-${views.length}-${passes.indexOf(pass)}.alpha`, alpha)
				for (const e of pass.items) e.crop = cropOf(alpha, W, e.r)
			}
			views.push({ page: 'page:page', viewport: { x: v.x, y: v.y, w: v.w, h: v.h }, zoom: v.z, passes: passes.length, shapes: composite(items, W, H) })
		}
	}
	return { input: resolve(input), unordered: [], views }
}

const opts = parseArgs(process.argv.slice(2))
const files = opts.editor === 'tldraw' ? await probeTldraw(opts) : await probeExcalidraw(opts)
const head = { editor: opts.editor, window: opts.window, minZoom: opts.minZoom }
const out = JSON.stringify(files.length === 1 ? { ...head, ...files[0] } : { ...head, files }) + '\n'
if (opts.out) writeFileSync(opts.out, out)
else process.stdout.write(out)
