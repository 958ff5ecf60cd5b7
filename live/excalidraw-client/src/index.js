// Connect an Excalidraw editor (npm `@excalidraw/excalidraw` 0.18) to a document of
// `spatialobs serve --http`.
//
//   import { connectExcalidraw } from '@spatialobs/excalidraw-live'
//   <Excalidraw excalidrawAPI={(api) => { connectExcalidraw(api, { url: 'ws://127.0.0.1:8765/v1/documents/NAME/live' }) }} />
//
// The person's edits reach the service from Excalidraw's own `onChange` (an element whose
// `version` or `versionNonce` moved since the last exchange was edited here); the
// service's elements are put into the scene with `updateScene` after the versions they
// bring are recorded, so they never echo back. Another person's edit is applied with
// `captureUpdate: NEVER` (outside this editor's undo history); an agent's apply with
// `IMMEDIATELY`, one undo step, whose undo reaches the service as the person's edit.
// The person's viewport (page coordinates from scroll and zoom) and selection go with
// every change of them; `screenshot` pictures come from `exportToBlob`. An agent's
// set_viewport moves the view (`updateScene` of scrollX, scrollY and zoom).
import { CaptureUpdateAction, exportToBlob, getCommonBounds, loadFromBlob, restoreElements } from '@excalidraw/excalidraw'
import { LiveSync, blobToBase64, fitViewport, liveUrl } from '@spatialobs/live-sync'

export { liveUrl }

const PAGE = 'page:page' // the service's one page of an Excalidraw scene

function sortByIndex(elements) {
	// Excalidraw keeps the scene's array in the order of the fractional `index` keys
	const pos = new Map(elements.map((e, i) => [e.id, i]))
	return elements.slice().sort((a, b) => {
		const ka = typeof a.index === 'string' ? a.index : null
		const kb = typeof b.index === 'string' ? b.index : null
		if (ka !== null && kb !== null && ka !== kb) return ka < kb ? -1 : 1
		if ((ka === null) !== (kb === null)) return ka === null ? 1 : -1
		return pos.get(a.id) - pos.get(b.id)
	})
}

// Resolves once the editor has drawn what was just asked of it (its next change notification:
// Excalidraw commits `updateScene` and `scrollToContent` with React's next render, so
// `getAppState()` still reads the old view right after them), or after `ms` if nothing changed.
function nextCommit(api, ms = 1000) {
	return new Promise((resolve) => {
		let off = null
		const timer = setTimeout(() => {
			if (off) off()
			resolve(false)
		}, ms)
		off = api.onChange(() => {
			clearTimeout(timer)
			off()
			resolve(true)
		})
	})
}

/** The editor adapter @spatialobs/live-sync drives (exported for custom setups and tests). */
export function excalidrawAdapter(api, { fitOnLoad = false } = {}) {
	let byId = null // id -> element of the scene, rebuilt when the scene changes
	let sceneRef = null
	const scene = () => {
		const els = api.getSceneElementsIncludingDeleted()
		if (els !== sceneRef) {
			sceneRef = els
			byId = new Map(els.map((e) => [e.id, e]))
		}
		return els
	}
	return {
		format: 'excalidraw',
		recordsKey: 'elements',
		records() {
			return scene()
		},
		get(id) {
			scene()
			return byId.get(id)
		},
		// Excalidraw may change an element in place, bumping its version: compare versions
		changed(known, cur) {
			return (
				known.obj !== cur ||
				cur.version !== known.copy.version ||
				cur.versionNonce !== known.copy.versionNonce ||
				cur.isDeleted !== known.copy.isDeleted
			)
		},
		copy(e) {
			return JSON.parse(JSON.stringify(e))
		},
		comparable(e) {
			return e
		},
		schema() {
			return null
		},
		// File › Open: loadFromBlob restores the scene (repairing bindings), then the scene is replaced
		async load(doc) {
			const blob = new Blob([JSON.stringify(doc)], { type: 'application/json' })
			const data = await loadFromBlob(blob, null, null)
			const tombstones = (doc.elements || []).filter((e) => e && e.isDeleted)
			const elements = sortByIndex([...data.elements, ...restoreElements(tombstones, null)])
			const app = doc.appState || {}
			const appState = {}
			if (typeof app.scrollX === 'number' && typeof app.scrollY === 'number') {
				appState.scrollX = app.scrollX
				appState.scrollY = app.scrollY
				const z = typeof app.zoom === 'object' && app.zoom ? app.zoom.value : app.zoom
				if (typeof z === 'number' && z > 0) appState.zoom = { value: z }
			}
			if (app.viewBackgroundColor) appState.viewBackgroundColor = app.viewBackgroundColor
			if (data.files && Object.keys(data.files).length) api.addFiles(Object.values(data.files))
			// the first presence goes once load resolves: it must read the view the scene opens at
			const committed = nextCommit(api)
			api.updateScene({ elements, appState, captureUpdate: CaptureUpdateAction.NEVER })
			api.history.clear()
			if (fitOnLoad && appState.scrollX === undefined && elements.some((e) => !e.isDeleted)) {
				api.scrollToContent(undefined, { fitToContent: true, animate: false })
			}
			await committed
		},
		apply(put, remove, { undoable }) {
			const current = scene()
			const incoming = restoreElements(put, null, { refreshDimensions: false, repairBindings: false })
			const repl = new Map(incoming.map((e) => [e.id, e]))
			const gone = new Set(remove)
			const next = []
			for (const e of current) {
				if (gone.has(e.id)) continue
				const r = repl.get(e.id)
				if (r) {
					next.push(r)
					repl.delete(e.id)
				} else next.push(e)
			}
			for (const r of repl.values()) next.push(r)
			api.updateScene({
				elements: sortByIndex(next),
				captureUpdate: undoable ? CaptureUpdateAction.IMMEDIATELY : CaptureUpdateAction.NEVER,
			})
		},
		subscribe(onChange) {
			return api.onChange(() => onChange(null))
		},
		subscribePresence(onChange) {
			let last = ''
			return api.onChange((_els, app) => {
				const key = `${app.scrollX},${app.scrollY},${app.zoom.value},${app.width},${app.height},${Object.keys(app.selectedElementIds || {}).join(',')}`
				if (key !== last) {
					last = key
					onChange()
				}
			})
		},
		presence() {
			const app = api.getAppState()
			const z = app.zoom.value
			return {
				page: PAGE,
				viewport: { x: -app.scrollX, y: -app.scrollY, w: app.width / z, h: app.height / z },
				selected: Object.keys(app.selectedElementIds || {}).filter((k) => app.selectedElementIds[k]),
				screen: { w: app.width, h: app.height },
				zoom: z,
			}
		},
		// Show the page box `vp` (the scene has one page): the scroll is the negated scene point at the
		// screen's top left, as presence() reads it back. Returns false: the view is drawn with the
		// next render, and its presence goes from the change notification then (read now, it would
		// be the view before).
		setViewport(_page, vp) {
			const app = api.getAppState()
			const f = fitViewport(vp, { w: app.width, h: app.height })
			api.updateScene({
				appState: { scrollX: -f.x, scrollY: -f.y, zoom: { value: f.z } },
				captureUpdate: CaptureUpdateAction.NEVER,
			})
			return false
		},
		// The person's view as Excalidraw draws it: exportToBlob of the elements in view at the
		// person's zoom, cut to the viewport (one image pixel per screen pixel).
		async exportImage({ viewport, format = 'png' } = {}) {
			const app = api.getAppState()
			const z = app.zoom.value
			const vp = viewport || { x: -app.scrollX, y: -app.scrollY, w: app.width / z, h: app.height / z }
			const zoom = viewport ? app.width / vp.w : z
			const W = Math.max(1, Math.round(vp.w * zoom))
			const H = Math.max(1, Math.round(vp.h * zoom))
			const all = api.getSceneElements()
			const inView = all.filter((e) => {
				const [x0, y0, x1, y1] = getCommonBounds([e])
				return x1 >= vp.x && x0 <= vp.x + vp.w && y1 >= vp.y && y0 <= vp.y + vp.h
			})
			const out = new OffscreenCanvas(W, H)
			const g = out.getContext('2d')
			g.fillStyle = app.viewBackgroundColor || '#ffffff'
			g.fillRect(0, 0, W, H)
			if (inView.length) {
				const [bx, by] = getCommonBounds(inView)
				const blob = await exportToBlob({
					elements: inView,
					appState: { ...app, exportBackground: false, exportWithDarkMode: false },
					files: api.getFiles(),
					exportPadding: 0,
					mimeType: 'image/png',
					getDimensions: (w, h) => ({ width: w * zoom, height: h * zoom, scale: zoom }),
				})
				const bmp = await createImageBitmap(blob)
				g.drawImage(bmp, (bx - vp.x) * zoom, (by - vp.y) * zoom)
			}
			const png = await out.convertToBlob({ type: 'image/png' })
			return { mime: 'image/png', data: await blobToBase64(png), width: W, height: H, shapes: inView.length }
		},
	}
}

/**
 * Connect an Excalidraw API (from the `excalidrawAPI` prop) to a live document. Returns the
 * running {@link LiveSync} (`.stop()` disconnects; `.settled()` resolves when the service has
 * every edit).
 */
export function connectExcalidraw(api, opts = {}) {
	const url = opts.url || liveUrl(opts.document, opts.base)
	const adapter = excalidrawAdapter(api, opts)
	return new LiveSync({ ...opts, url, adapter }).start()
}
