// Browser side of the harness: mounts the real <Excalidraw> component and exposes
// window.__harness.run(text, opts), which run.mjs calls through page.evaluate() once
// per input file.
//
// For one file it does what File › Open does: loadFromBlob() (clearElementsForExport,
// then restore(..., {repairBindings: true, refreshDimensions: false})), then puts the
// restored elements into the mounted editor with updateScene(), reads the scene back
// and asks Excalidraw's exported getCommonBounds() for each element's bounds.
import React from 'react'
import { createRoot } from 'react-dom/client'
import {
	CaptureUpdateAction,
	convertToExcalidrawElements,
	Excalidraw,
	exportToCanvas,
	getCommonBounds,
	isLinearElement,
	loadFromBlob,
	restoreAppState,
} from '@excalidraw/excalidraw'
import '@excalidraw/excalidraw/index.css'

/* global __PKG_VERSIONS__ */
const PKG_VERSIONS = __PKG_VERSIONS__

let api = null
let resolveReady
const readyPromise = new Promise((r) => (resolveReady = r))

function App() {
	return (
		<Excalidraw
			excalidrawAPI={(a) => {
				api = a
				window.excalidrawAPI = a
				resolveReady()
			}}
		/>
	)
}

createRoot(document.getElementById('root')).render(<App />)

// ---------------------------------------------------------------------------
// helpers

const FIELDS = [
	'id', 'type', 'index', 'x', 'y', 'width', 'height', 'angle', 'isDeleted', 'groupIds', 'frameId',
	'containerId', 'boundElements', 'startBinding', 'endBinding', 'points', 'roughness', 'roundness',
	'strokeWidth', 'elbowed', 'text', 'originalText', 'fontSize', 'fontFamily', 'lineHeight',
	'textAlign', 'verticalAlign', 'autoResize', 'name', 'opacity', 'locked', 'version',
	'startArrowhead', 'endArrowhead', 'strokeStyle',
]

const nextFrame = () => new Promise((r) => requestAnimationFrame(() => r()))

function deepEqual(a, b) {
	if (a === b) return true
	if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b)
	if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false
	if (Array.isArray(a) !== Array.isArray(b)) return false
	if (Array.isArray(a)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]))
	const ka = Object.keys(a).filter((k) => a[k] !== undefined)
	const kb = Object.keys(b).filter((k) => b[k] !== undefined)
	return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]))
}

// JSON-safe copy: undefined becomes absent, non-finite numbers become null.
const plain = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)))

// Field-by-field changes from `before` to `after`: {field: {before, after}}; a side that
// lacks the field is omitted from its pair (so `{after: x}` is a field restore added).
function fieldChanges(before, after) {
	const out = {}
	const keys = new Set([...Object.keys(before), ...Object.keys(after)])
	for (const k of keys) {
		const a = before[k]
		const b = after[k]
		if (a === undefined && b === undefined) continue
		if (deepEqual(a, b)) continue
		const pair = {}
		if (a !== undefined) pair.before = plain(a)
		if (b !== undefined) pair.after = plain(b)
		out[k] = pair
	}
	return out
}

// Per-element differences between two element lists matched by id.
function diffElements(beforeList, afterList) {
	const afterById = new Map()
	for (const e of afterList) if (e && typeof e.id === 'string') afterById.set(e.id, e)
	const seen = new Set()
	const changed = []
	const missing = []
	for (const e of beforeList) {
		if (!e || typeof e !== 'object' || typeof e.id !== 'string' || seen.has(e.id)) continue
		seen.add(e.id)
		const r = afterById.get(e.id)
		if (!r) {
			missing.push({ id: e.id, type: e.type ?? null, isDeleted: !!e.isDeleted })
			continue
		}
		const fields = fieldChanges(e, r)
		if (Object.keys(fields).length) changed.push({ id: e.id, type: r.type, fields })
	}
	const added = afterList.filter((e) => e && !seen.has(e.id)).map((e) => ({ id: e.id, type: e.type }))
	return { changed, missing, added }
}

const box = (b) => (b && b.every(Number.isFinite) ? b.map((v) => v) : null)

// Bounds as Excalidraw computes them (getCommonBounds over one element).
//   bounds       with the whole scene as the elements map: what Excalidraw uses for
//                selection, culling and export. An arrow or line with a bound label
//                includes the label; text bound to an arrow sits at the arrow's midpoint.
//   shapeBounds  (linear and freedraw) the element alone, no label.
//   curveBounds  (linear) the element alone with roughness 0: the smooth curve (rounded
//                lines and arrows) or polyline through the points, without rough.js'
//                hand-drawn jitter, which depends on the element's seed.
function elementBounds(el, sceneMap) {
	const out = { bounds: box(getCommonBounds([el], sceneMap)) }
	// Copies, because Excalidraw caches bounds per element object and version, whatever
	// elements map they were computed with (and shapes per object, seeded, so a copy
	// draws the same rough.js stroke).
	if (isLinearElement(el) || el.type === 'freedraw') {
		const alone = { ...el }
		out.shapeBounds = box(getCommonBounds([alone], new Map([[el.id, alone]])))
	}
	if (isLinearElement(el)) {
		const smooth = { ...el, roughness: 0 }
		out.curveBounds = box(getCommonBounds([smooth], new Map([[el.id, smooth]])))
	}
	return out
}

function describe(el, sceneMap) {
	const d = {}
	for (const k of FIELDS) if (el[k] !== undefined) d[k] = plain(el[k])
	const b = elementBounds(el, sceneMap)
	Object.assign(d, b)
	return d
}

// ---------------------------------------------------------------------------
// one file

async function run(text, opts = {}) {
	await readyPromise
	const result = { ok: false, load: { via: 'loadFromBlob (File › Open)', error: null } }
	let raw = null
	try {
		raw = JSON.parse(text)
	} catch (e) {
		result.load.error = { name: 'SyntaxError', message: String(e.message || e) }
		return result
	}
	const rawElements = raw && Array.isArray(raw.elements) ? raw.elements : []
	result.scene = {
		type: raw && raw.type,
		version: raw && raw.version,
		source: raw && raw.source,
		elementCount: rawElements.length,
		deletedCount: rawElements.filter((e) => e && e.isDeleted).length,
	}
	let restored
	try {
		const blob = new Blob([text], { type: 'application/json' })
		restored = await loadFromBlob(blob, null, null)
	} catch (e) {
		result.load.error = { name: e && e.name, message: String((e && e.message) || e) }
		return result
	}
	const restoredElements = restored.elements
	const liveInput = rawElements.filter((e) => e && typeof e === 'object' && !e.isDeleted)
	// what restore did to the (non-deleted) elements of the file; deleted elements are
	// dropped by clearElementsForExport before restore sees them
	const restoreDiff = diffElements(liveInput, restoredElements)
	result.restore = {
		elementCount: restoredElements.length,
		dropped: restoreDiff.missing,
		added: restoreDiff.added,
		changed: restoreDiff.changed,
		appStateKeys: Object.keys(restored.appState || {}).length,
	}
	// the camera: File › Open drops the file's scroll and zoom (cleanAppStateForExport), while an app that
	// passes the file as initialData (restore without that cleaning) opens at the stored one
	const ra = restored.appState || {}
	const ia = restoreAppState(raw && typeof raw.appState === 'object' ? raw.appState : {}, null)
	result.camera = {
		fileOpen: { scrollX: ra.scrollX, scrollY: ra.scrollY, zoom: ra.zoom && ra.zoom.value },
		initialData: { scrollX: ia.scrollX, scrollY: ia.scrollY, zoom: ia.zoom && ia.zoom.value },
	}

	// the editor: replace the scene the way File › Open does, then read it back
	api.resetScene()
	api.updateScene({
		elements: restoredElements,
		appState: { viewBackgroundColor: restored.appState.viewBackgroundColor },
		captureUpdate: CaptureUpdateAction.NEVER,
	})
	await document.fonts.ready
	await nextFrame()
	await nextFrame()
	const scene = api.getSceneElementsIncludingDeleted()
	const sceneMap = new Map(scene.map((e) => [e.id, e]))
	const editorDiff = diffElements(restoredElements, scene)
	result.editor = { changed: editorDiff.changed, missing: editorDiff.missing, added: editorDiff.added }
	const ea = api.getAppState()
	result.camera.editor = { scrollX: ea.scrollX, scrollY: ea.scrollY, zoom: ea.zoom.value, width: ea.width, height: ea.height }
	// the editor at the stored camera, as an app restoring it shows the scene
	api.updateScene({ appState: { scrollX: ia.scrollX, scrollY: ia.scrollY, zoom: ia.zoom }, captureUpdate: CaptureUpdateAction.NEVER })
	await nextFrame()
	const sa = api.getAppState()
	result.camera.editorAtStored = { scrollX: sa.scrollX, scrollY: sa.scrollY, zoom: sa.zoom.value }
	result.elements = scene.map((e) => describe(e, sceneMap))
	const live = scene.filter((e) => !e.isDeleted)
	result.sceneBounds = live.length ? box(getCommonBounds(live, sceneMap)) : null
	result.ok = true
	return result
}

function fonts() {
	const out = []
	document.fonts.forEach((f) => out.push({ family: f.family, status: f.status, unicodeRange: f.unicodeRange.length > 40 ? 'subset' : f.unicodeRange }))
	const byFamily = {}
	for (const f of out) {
		const s = (byFamily[f.family] ||= { faces: 0, loaded: 0 })
		s.faces++
		if (f.status === 'loaded') s.loaded++
	}
	return byFamily
}

// ---------------------------------------------------------------------------
// pixel probe (tools/pixel-probe): one scene, rendered a few elements at a time

let probe = null

// Opens a file as File › Open does and lists its live elements in paint order with their
// bounds {x, y, w, h} and opacity 0..1; later probePass calls render from it.
async function probeScene(text) {
	await readyPromise
	let restored
	try {
		restored = await loadFromBlob(new Blob([text], { type: 'application/json' }), null, null)
	} catch (e) {
		return { ok: false, error: String((e && e.message) || e) }
	}
	const elements = restored.elements.filter((e) => !e.isDeleted)
	const map = new Map(elements.map((e) => [e.id, e]))
	probe = { elements, files: restored.files || {} }
	const xywh = (b) => (b && b.every(Number.isFinite) ? [b[0], b[1], b[2] - b[0], b[3] - b[1]] : null)
	return {
		ok: true,
		bounds: elements.length ? xywh(getCommonBounds(elements, map)) : null,
		elements: elements.map((e, i) => ({ id: e.id, type: e.type, order: i, opacity: (e.opacity ?? 100) / 100, b: xywh(getCommonBounds([e], map)) })),
	}
}

// Renders the elements `ids` alone (the others at opacity 0, so the canvas keeps its extent)
// with Excalidraw's exportToCanvas at zoom v.z, frames clipping their children, on a
// transparent background; returns the alpha of the W x H window at scene (v.x, v.y), base64.
async function probePass(ids, v, W, H) {
	const on = new Set(ids)
	// frames stay at full opacity: Excalidraw skips the children of a frame it does not draw
	const els = probe.elements.map((e) => ({ ...e, opacity: on.has(e.id) || e.type === 'frame' || e.type === 'magicframe' ? 100 : 0 }))
	const have = new Set(els.map((e) => e.id))
	const root = els.filter((e) => !e.frameId || !have.has(e.frameId))
	const [minX, minY] = getCommonBounds(root)
	const canvas = await exportToCanvas({
		elements: els,
		files: probe.files,
		exportPadding: 0,
		appState: {
			exportBackground: false,
			viewBackgroundColor: '#ffffff',
			frameRendering: { enabled: true, clip: true, name: false, outline: false },
		},
		getDimensions: (w, h) => ({ width: Math.ceil(w * v.z), height: Math.ceil(h * v.z), scale: v.z }),
	})
	const ctx = canvas.getContext('2d')
	const dx = Math.round((v.x - minX) * v.z)
	const dy = Math.round((v.y - minY) * v.z)
	const img = ctx.getImageData(dx, dy, W, H).data
	const alpha = new Uint8Array(W * H)
	for (let i = 0; i < W * H; i++) alpha[i] = img[i * 4 + 3]
	let bin = ''
	for (let i = 0; i < alpha.length; i += 0x8000) bin += String.fromCharCode.apply(null, alpha.subarray(i, i + 0x8000))
	return btoa(bin)
}

// ---------------------------------------------------------------------------
// Mermaid: what Excalidraw's own Mermaid import makes of a flowchart

async function mermaid(definition) {
	await readyPromise
	const result = { ok: false, error: null }
	let skeleton
	try {
		// the package Excalidraw's "Mermaid to Excalidraw" dialog loads, with its defaults
		const { parseMermaidToExcalidraw } = await import('@excalidraw/mermaid-to-excalidraw')
		const parsed = await parseMermaidToExcalidraw(definition)
		skeleton = parsed.elements
	} catch (e) {
		result.error = { name: e && e.name, message: String((e && e.message) || e) }
		return result
	}
	result.skeleton = skeleton.map((e) => ({
		id: e.id, type: e.type, groupIds: e.groupIds || [], x: e.x, y: e.y, width: e.width, height: e.height,
		label: e.label ? e.label.text : null, start: e.start ? e.start.id : null, end: e.end ? e.end.id : null,
		startArrowhead: e.startArrowhead, endArrowhead: e.endArrowhead, strokeStyle: e.strokeStyle,
		strokeWidth: e.strokeWidth, roundness: e.roundness || null,
	}))
	// the elements Excalidraw makes of the skeleton (ids kept, so they name the Mermaid ids), opened in the editor
	const elements = convertToExcalidrawElements(skeleton, { regenerateIds: false })
	api.resetScene()
	api.updateScene({ elements, captureUpdate: CaptureUpdateAction.NEVER })
	await document.fonts.ready
	await nextFrame()
	const scene = api.getSceneElementsIncludingDeleted()
	const sceneMap = new Map(scene.map((e) => [e.id, e]))
	result.elements = scene.map((e) => describe(e, sceneMap))
	result.ok = true
	return result
}

window.__harness = {
	isReady: () => api !== null,
	run,
	probeScene,
	probePass,
	mermaid,
	info: () => ({ packageVersions: PKG_VERSIONS, excalidrawVersion: PKG_VERSIONS['@excalidraw/excalidraw'], userAgent: navigator.userAgent }),
	fonts,
}
