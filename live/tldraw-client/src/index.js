// Connect a tldraw editor (npm `tldraw` 5.x) to a document of `spatialobs serve --http`.
//
//   import { connectTldraw } from '@spatialobs/tldraw-live'
//   <Tldraw onMount={(editor) => { connectTldraw(editor, { url: 'ws://127.0.0.1:8765/v1/documents/NAME/live' }) }} />
//
// The person's edits reach the service from tldraw's own store listener (document
// records, changes made by the user) and its after-change handlers (so an edit leaves
// at once rather than at the next animation frame); the service's changes are applied with
// `store.mergeRemoteChanges` (another person's edit: never echoed, never in this
// editor's undo history) or, for an agent's apply, as one undoable step (one Ctrl+Z
// takes it back, and that undo reaches the service as the person's edit). The
// person's viewport (page coordinates), selection and current page go with every
// camera or selection change; `screenshot` pictures come from tldraw's image export. An
// agent's set_viewport moves the camera (`editor.setCamera`) when it is of the current page.
import { Box, parseTldrawJsonFile } from 'tldraw'
import { LiveSync, blobToBase64, fitViewport, liveUrl } from '@spatialobs/live-sync'

export { liveUrl }

// The record types a document holds; session records (camera, instance, pointer) stay here.
const DOCUMENT_TYPES = new Set(['document', 'page', 'shape', 'binding', 'asset'])

/** The editor adapter @spatialobs/live-sync drives (exported for custom setups and tests). */
export function tldrawAdapter(editor, { fitOnLoad = false } = {}) {
	const ed = editor
	const isDoc = (r) => r && DOCUMENT_TYPES.has(r.typeName)
	const listeners = [] // [filters, callback, unlisten]
	const listen = (l) => {
		l[2] = ed.store.listen(l[1], l[0])
	}
	const subscribeStore = (filters, cb) => {
		const l = [filters, cb, null]
		listeners.push(l)
		listen(l)
		return () => {
			l[2] && l[2]()
			listeners.splice(listeners.indexOf(l), 1)
		}
	}
	const fit = () => {
		const n = ed.getCurrentPageShapeIds().size
		if (!fitOnLoad || !n) return
		// every shape in view is rendered: beyond a few thousand, the page's top left at 100 %
		if (n <= 3000) ed.zoomToFit({ animation: undefined })
		else {
			const b = ed.getCurrentPageBounds()
			if (b) ed.setCamera({ x: -b.x + 40, y: -b.y + 40, z: 1 }, { immediate: true })
		}
	}
	return {
		format: 'tldraw',
		recordsKey: 'records',
		get editor() {
			return ed
		},
		records() {
			return ed.store.allRecords().filter(isDoc)
		},
		get(id) {
			const r = ed.store.get(id)
			return isDoc(r) ? r : undefined
		},
		// tldraw's records are immutable: a changed record is a new object
		changed(known, cur) {
			return known.obj !== cur
		},
		copy(r) {
			return r
		},
		comparable(r) {
			return r
		},
		schema() {
			return ed.store.schema.serialize()
		},
		// File › Open: parse (migrating an older schema), then load the document records
		async load(doc) {
			const parsed = parseTldrawJsonFile({ json: JSON.stringify(doc), schema: ed.store.schema })
			if (!parsed.ok) {
				const e = parsed.error
				throw new Error(`tldraw could not open the document: ${e.type}${e.reason ? ` (${e.reason})` : ''}`)
			}
			ed.loadSnapshot(parsed.value.getStoreSnapshot())
			ed.clearHistory()
			fit()
		},
		apply(put, remove, { undoable }) {
			const store = ed.store
			const gone = remove.filter((id) => store.has(id))
			const run = () => {
				if (put.length) store.put(put)
				if (gone.length) store.remove(gone)
			}
			if (undoable) {
				ed.markHistoryStoppingPoint('spatialobs live: agent apply')
				ed.run(run, { history: 'record', ignoreShapeLock: true })
			} else {
				store.mergeRemoteChanges(run)
			}
		},
		subscribe(onChange) {
			// the store listener (user changes to document records) is flushed once per animation frame;
			// the store's after-change handlers say at once that a record changed, so the edit goes out
			// in a microtask instead of waiting for the next frame (the core sends each change once)
			const unlisten = subscribeStore({ source: 'user', scope: 'document' }, ({ changes }) => {
				const ids = [...Object.keys(changes.added), ...Object.keys(changes.updated), ...Object.keys(changes.removed)]
				if (ids.length) onChange(ids)
			})
			let soon = null
			const touched = (r, source) => {
				if (source !== 'user') return
				if (!soon) {
					soon = new Set()
					queueMicrotask(() => {
						const ids = [...soon]
						soon = null
						onChange(ids)
					})
				}
				soon.add(r.id)
			}
			const handlers = {}
			for (const t of DOCUMENT_TYPES) {
				handlers[t] = {
					afterCreate: (r, source) => touched(r, source),
					afterChange: (_prev, r, source) => touched(r, source),
					afterDelete: (r, source) => touched(r, source),
				}
			}
			const unregister = ed.sideEffects.register(handlers)
			return () => {
				unlisten()
				unregister()
			}
		},
		subscribePresence(onChange) {
			return subscribeStore({ scope: 'session' }, () => onChange())
		},
		presence() {
			const v = ed.getViewportPageBounds()
			const s = ed.getViewportScreenBounds()
			return {
				page: ed.getCurrentPageId(),
				viewport: { x: v.x, y: v.y, w: v.w, h: v.h },
				selected: ed.getSelectedShapeIds(),
				screen: { w: s.w, h: s.h },
				zoom: ed.getZoomLevel(),
			}
		},
		// Show the page box `vp` (page units) on the current page: tldraw's camera is the negated page
		// point at the screen's top left, and the zoom. False when `page` is another page.
		setViewport(page, vp) {
			if (page !== null && page !== ed.getCurrentPageId()) return false
			const s = ed.getViewportScreenBounds()
			const f = fitViewport(vp, { w: s.w, h: s.h })
			ed.setCamera({ x: -f.x, y: -f.y, z: f.z }, { immediate: true, force: true })
			return true
		},
		// The person's view as tldraw draws it: the shapes in the viewport, the viewport's bounds,
		// at the person's zoom (one image pixel per screen pixel).
		async exportImage({ viewport, format = 'png' } = {}) {
			const vb = viewport ? new Box(viewport.x, viewport.y, viewport.w, viewport.h) : ed.getViewportPageBounds()
			const zoom = viewport ? ed.getViewportScreenBounds().w / vb.w : ed.getZoomLevel()
			const ids = [...ed.getCurrentPageShapeIds()].filter((id) => {
				const b = ed.getShapePageBounds(id)
				return b && b.collides(vb)
			})
			const w = Math.max(1, Math.round(vb.w * zoom))
			const h = Math.max(1, Math.round(vb.h * zoom))
			if (!ids.length) {
				// nothing in view: the empty page, as the editor shows it
				const c = new OffscreenCanvas(w, h)
				const g = c.getContext('2d')
				g.fillStyle = getComputedStyle(ed.getContainer()).getPropertyValue('--color-background') || '#ffffff'
				g.fillRect(0, 0, w, h)
				const blob = await c.convertToBlob({ type: 'image/png' })
				return { mime: 'image/png', data: await blobToBase64(blob), width: w, height: h, shapes: 0 }
			}
			const out = await ed.toImage(ids, { format, bounds: vb, padding: 0, background: true, scale: zoom, pixelRatio: 1 })
			return {
				mime: format === 'svg' ? 'image/svg+xml' : `image/${format}`,
				data: await blobToBase64(out.blob),
				width: out.width,
				height: out.height,
				shapes: ids.length,
			}
		},
	}
}

/**
 * Connect `editor` to a live document. Returns the running {@link LiveSync}
 * (`.stop()` disconnects; `.settled()` resolves when the service has every edit).
 *
 * @param {import('tldraw').Editor} editor
 * @param {object} opts  url (or document + base), token, session, onStatus, fitOnLoad
 */
export function connectTldraw(editor, opts = {}) {
	const url = opts.url || liveUrl(opts.document, opts.base)
	const adapter = tldrawAdapter(editor, opts)
	return new LiveSync({ ...opts, url, adapter }).start()
}
