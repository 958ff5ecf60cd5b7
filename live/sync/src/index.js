// The live protocol of `spatialobs serve --http`: one WebSocket per open document,
// /v1/documents/{name}/live. The service holds the document and orders every change
// (a person's edit in an editor, an agent's apply, an undo, a reload) into versions;
// each editor keeps its records in step with it.
//
// An editor adapter (see @spatialobs/tldraw-live and @spatialobs/excalidraw-live) gives
// this module the editor's records and applies the service's records to the editor as
// remote changes, so nothing echoes back. This module:
//   * finds the person's edits by comparing the editor's records with the records last
//     exchanged with the service (`shadow`), and sends them as whole records (new ones),
//     field patches and removals;
//   * keeps the edits the service has not acknowledged yet (`pending`) and re-applies them
//     over every change the service sends, so a person's edit made while an agent's apply
//     is in flight is kept, and the editor converges on the service's order;
//   * sends the person's viewport (page coordinates), selection and current page;
//   * reconnects after a dropped socket and resumes from the last version it saw, sending
//     again what the service had not acknowledged;
//   * answers the service's requests for a picture of the person's view;
//   * moves the person's view where an agent's set_viewport put the camera (`camera`): the
//     editor shows the page box {x, y, w, h}, centered, at the largest zoom that fits its
//     screen (exactly that box when the screen has its aspect), then reports that view.
//
// Messages (JSON, one per WebSocket message):
//   editor -> service  {type: "hello", session, version, editor}
//                      {type: "adopt", records, schema}            after loading the document
//                      {type: "diff", seq, base, put, patch, remove, cause?}
//                      {type: "presence", page, viewport: {x, y, w, h}, selected, screen}
//                      {type: "export_result", id, ok, mime?, data?, width?, height?, error?}
//   service -> editor  {type: "hello", session, version, mode, document?, records?, changes?, acked}
//                      {type: "changes", version, by, session, ack?, put, remove, undoable}
//                      {type: "error", code, message, seq?, revert?: {put, remove}}
//                      {type: "export", id, viewport?, format?}
//                      {type: "camera", by, page, viewport: {x, y, w, h}, zoom?}   protocol 2; not a version
//                      {type: "closed", reason}
// A patch is {id, set: {path: value}, unset: [path]}, a path "field" or "field.key".

// 2: the service sends `camera` (a client that says 1, or nothing, does not get it)
export const PROTOCOL = 2

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

export function deepEqual(a, b) {
	if (a === b) return true
	if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') {
		return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b)
	}
	if (Array.isArray(a) !== Array.isArray(b)) return false
	if (Array.isArray(a)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]))
	const ka = Object.keys(a).filter((k) => a[k] !== undefined)
	const kb = Object.keys(b).filter((k) => b[k] !== undefined)
	return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]))
}

// A JSON copy (undefined fields dropped), which is what the service will hold.
export const plain = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)))

// Fields one level down that a patch addresses key by key.
const NESTED = new Set(['props', 'meta'])

// The patch taking record `from` to record `to` (null when they are equal).
export function diffRecord(from, to) {
	const set = {}
	const unset = []
	let n = 0
	for (const k of Object.keys(to)) {
		const b = to[k]
		if (b === undefined) continue
		const a = from[k]
		if (deepEqual(a, b)) continue
		if (NESTED.has(k) && isObject(a) && isObject(b)) {
			for (const kk of Object.keys(b)) {
				if (b[kk] !== undefined && !deepEqual(a[kk], b[kk])) {
					set[`${k}.${kk}`] = plain(b[kk])
					n++
				}
			}
			for (const kk of Object.keys(a)) {
				if (a[kk] !== undefined && b[kk] === undefined) {
					unset.push(`${k}.${kk}`)
					n++
				}
			}
			continue
		}
		set[k] = plain(b)
		n++
	}
	for (const k of Object.keys(from)) {
		if (from[k] !== undefined && to[k] === undefined) {
			unset.push(k)
			n++
		}
	}
	if (!n) return null
	const p = { id: to.id ?? from.id }
	if (Object.keys(set).length) p.set = set
	if (unset.length) p.unset = unset
	return p
}

// `record` with a patch applied (a new object), as the service merges it.
export function applyPatch(record, patch) {
	const out = { ...record }
	const copied = new Set()
	const target = (path) => {
		const dot = path.indexOf('.')
		if (dot < 0) return [out, path]
		const head = path.slice(0, dot)
		if (!copied.has(head)) {
			out[head] = isObject(out[head]) ? { ...out[head] } : {}
			copied.add(head)
		}
		return [out[head], path.slice(dot + 1)]
	}
	for (const [path, value] of Object.entries(patch.set || {})) {
		const [t, k] = target(path)
		t[k] = value
	}
	for (const path of patch.unset || []) {
		const [t, k] = target(path)
		delete t[k]
	}
	return out
}

// The value of one record after a list of pending edits (undefined: it does not exist).
function replay(value, edits, id) {
	let v = value
	for (const e of edits) {
		if (e.removeSet.has(id)) v = undefined
		const put = e.putById.get(id)
		if (put) v = put
		const patch = e.patchById.get(id)
		if (patch && v !== undefined) v = applyPatch(v, patch)
	}
	return v
}

function indexEdit(msg) {
	return {
		...msg,
		putById: new Map((msg.put || []).map((r) => [r.id, r])),
		patchById: new Map((msg.patch || []).map((p) => [p.id, p])),
		removeSet: new Set(msg.remove || []),
	}
}

function randomId() {
	const b = new Uint8Array(9)
	crypto.getRandomValues(b)
	return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')
}

/**
 * Keeps one editor's records in step with a document of `spatialobs serve`.
 *
 * @param {object} opts
 * @param {string} opts.url            ws:// or wss:// URL of /v1/documents/{name}/live
 * @param {object} opts.adapter        the editor adapter (see the tldraw and Excalidraw clients)
 * @param {string} [opts.token]        the server's bearer token, if it has one
 * @param {string} [opts.session]      a stable id for this editor session (default: random)
 * @param {Function} [opts.WebSocket]  the WebSocket class (default: globalThis.WebSocket)
 * @param {Function} [opts.onStatus]   called with {status, version, error?} on every change of state
 * @param {number} [opts.presenceMs]   the least time between two presence messages (default 30)
 */
export class LiveSync {
	constructor({ url, adapter, token = null, session = null, WebSocket = globalThis.WebSocket, onStatus = null, presenceMs = 30 }) {
		if (!url) throw new Error('LiveSync: url is required')
		if (!adapter) throw new Error('LiveSync: adapter is required')
		this.url = url
		this.adapter = adapter
		this.token = token
		this.session = session || randomId()
		this.WebSocket = WebSocket
		this.onStatus = onStatus
		this.presenceMs = presenceMs
		this.version = null // the last service version applied
		this.epoch = null // which life of the document on the service those versions count
		this.server = new Map() // id -> record as the service holds it (at `version`)
		this.shadow = new Map() // id -> {obj, copy}: the editor's record last exchanged
		this.pending = [] // edits sent (or to send) and not yet acknowledged, in order
		this.seq = 0
		this.socket = null
		this.status = 'idle'
		this.loaded = false
		this.adopting = false
		this.stopped = false
		this.retry = 0
		this.lastError = null
		this.errors = []
		this._unsubs = []
		this._presenceTimer = null
		this._lastPresence = 0
		this._waiters = new Set()
		this._queue = Promise.resolve()
		// counts, and the times (performance.now(), ms) of the last connection's steps
		this.stats = { sent: 0, received: 0, reconnects: 0, openedAt: null, helloAt: null, loadStartedAt: null, loadedAt: null, syncedAt: null }
	}

	/** Open the socket and start listening to the editor. */
	start() {
		this.stopped = false
		this._unsubs.push(this.adapter.subscribe((ids) => this._local(ids)))
		if (this.adapter.subscribePresence) this._unsubs.push(this.adapter.subscribePresence(() => this._presence()))
		this._connect()
		return this
	}

	/** Close the socket and stop listening; pending edits are kept (start() again resumes). */
	stop() {
		this.stopped = true
		for (const u of this._unsubs.splice(0)) {
			try {
				u()
			} catch {}
		}
		clearTimeout(this._presenceTimer)
		if (this.socket) this.socket.close(1000, 'stopped')
		this.socket = null
		this._setStatus('stopped')
	}

	/** Drop the socket as a network failure would (the client reconnects and resumes). For tests. */
	dropConnection() {
		if (this.socket) this.socket.close(4000, 'dropped')
	}

	/** Resolves once every edit has been acknowledged by the service and nothing is unsent. */
	settled(timeoutMs = 10000) {
		this._local(null)
		if (this._isSettled()) return Promise.resolve(true)
		return new Promise((resolve, reject) => {
			const w = { resolve, timer: setTimeout(() => (this._waiters.delete(w), reject(new Error('not settled'))), timeoutMs) }
			this._waiters.add(w)
		})
	}

	_isSettled() {
		return this.loaded && !this.adopting && this.status === 'open' && this.pending.length === 0
	}

	_wake() {
		if (!this._isSettled()) return
		if (this.stats.syncedAt === null || this.stats.syncedAt < this.stats.helloAt) this.stats.syncedAt = performance.now()
		for (const w of this._waiters) {
			clearTimeout(w.timer)
			w.resolve(true)
		}
		this._waiters.clear()
	}

	_setStatus(status, error) {
		this.status = status
		if (error) this.lastError = error
		if (this.onStatus) {
			try {
				this.onStatus({ status, version: this.version, error })
			} catch {}
		}
	}

	_connect() {
		if (this.stopped) return
		const u = new URL(this.url)
		u.searchParams.set('session', this.session)
		if (this.token) u.searchParams.set('token', this.token)
		let ws
		try {
			ws = new this.WebSocket(u.toString())
		} catch (e) {
			this._scheduleReconnect(String(e))
			return
		}
		this.socket = ws
		this._setStatus('connecting')
		ws.onopen = () => {
			this.retry = 0
			this.stats.openedAt = performance.now()
			this._send({ type: 'hello', protocol: PROTOCOL, session: this.session, epoch: this.epoch, version: this.version, editor: this.adapter.format })
		}
		ws.onmessage = (ev) => {
			let msg
			try {
				msg = JSON.parse(typeof ev.data === 'string' ? ev.data : String(ev.data))
			} catch (e) {
				return
			}
			this.stats.received++
			// one message at a time, in order (loading a document is asynchronous)
			this._queue = this._queue.then(async () => {
				if (this.socket !== ws) return
				try {
					await this._receive(msg)
				} catch (e) {
					this.errors.push(String(e && e.stack ? e.stack : e))
					console.error('spatialobs live:', e)
				}
			})
		}
		ws.onclose = (ev) => {
			if (this.socket === ws) this.socket = null
			if (this.stopped) return
			if (ev.code === 4403 || ev.code === 4401 || ev.code === 4404 || ev.code === 4409) {
				this._setStatus('refused', ev.reason || `closed with ${ev.code}`)
				return
			}
			this._scheduleReconnect(ev.reason)
		}
		ws.onerror = () => {}
	}

	_scheduleReconnect(reason) {
		this._setStatus('reconnecting', reason)
		this.stats.reconnects++
		const delay = Math.min(2000, 50 * 2 ** Math.min(this.retry++, 6))
		setTimeout(() => this._connect(), delay)
	}

	_send(msg) {
		const ws = this.socket
		if (!ws || ws.readyState !== 1) return false
		ws.send(JSON.stringify(msg))
		this.stats.sent++
		return true
	}

	// ------------------------------------------------------------------ the editor's edits

	// What changed in the editor since the last exchange, for `ids` (null: every record).
	_collect(ids) {
		const a = this.adapter
		const put = []
		const patch = []
		const remove = []
		const check = (id) => {
			const cur = a.get(id)
			const known = this.shadow.get(id)
			if (cur === undefined) {
				if (known !== undefined) {
					remove.push(id)
					this.shadow.delete(id)
				}
				return
			}
			if (known === undefined) {
				put.push(plain(cur))
				this.shadow.set(id, { obj: cur, copy: a.copy(cur) })
				return
			}
			if (!a.changed(known, cur)) return
			const p = diffRecord(known.copy, cur)
			this.shadow.set(id, { obj: cur, copy: a.copy(cur) })
			if (p) patch.push(p)
		}
		if (ids) {
			for (const id of ids) check(id)
		} else {
			const seen = new Set()
			for (const r of a.records()) {
				seen.add(r.id)
				check(r.id)
			}
			for (const id of [...this.shadow.keys()]) if (!seen.has(id)) check(id)
		}
		return { put, patch, remove }
	}

	_local(ids, cause) {
		if (!this.loaded) return
		const d = this._collect(ids)
		if (!d.put.length && !d.patch.length && !d.remove.length) return
		const msg = { type: 'diff', seq: ++this.seq, base: this.version, put: d.put, patch: d.patch, remove: d.remove }
		if (cause) msg.cause = cause
		this.pending.push(indexEdit(msg))
		this._send(msg)
	}

	// ------------------------------------------------------------------ the service's messages

	_receive(msg) {
		switch (msg.type) {
			case 'hello':
				return this._hello(msg)
			case 'changes':
				return this._changes(msg)
			case 'error':
				return this._error(msg)
			case 'export':
				this._export(msg) // not awaited: pictures do not hold up the document's changes
				return
			case 'camera':
				return this._camera(msg)
			case 'closed':
				this._setStatus('closed', msg.reason)
				this.stopped = true
				if (this.socket) this.socket.close(1000)
				return
			default:
				return
		}
	}

	async _hello(msg) {
		this.stats.helloAt = performance.now()
		this.epoch = msg.epoch ?? null
		if (msg.mode === 'load' || msg.mode === 'records') {
			// the document as a file: the editor opens it as File › Open does
			this.loaded = false
			this.stats.loadStartedAt = performance.now()
			try {
				await this.adapter.load(msg.document)
			} catch (e) {
				this._send({ type: 'load_failed', error: String(e && e.message ? e.message : e) })
				this._setStatus('failed', String(e && e.message ? e.message : e))
				throw e
			}
			this.server = new Map()
			this.shadow = new Map()
			this.pending = []
			const recs = this.adapter.records()
			for (const r of recs) this.shadow.set(r.id, { obj: r, copy: this.adapter.copy(r) })
			this.version = msg.version
			this.loaded = true
			this.stats.loadedAt = performance.now()
			if (msg.mode === 'load') {
				// the first editor on this document: what it made of the file becomes the document. A tldraw
				// editor sends back only the records it changed (migrated, repaired) or dropped, and its schema.
				const schema = this.adapter.schema ? this.adapter.schema() : null
				const sent = msg.document[this.adapter.recordsKey] || []
				this.adopting = true
				if (schema) {
					const byId = new Map(sent.map((r) => [r.id, r]))
					const put = []
					const seen = new Set()
					for (const r of recs) {
						seen.add(r.id)
						const b = byId.get(r.id)
						if (b === undefined || !deepEqual(r, b)) put.push(plain(r))
						else this.server.set(r.id, b)
					}
					for (const r of put) this.server.set(r.id, r)
					const remove = sent.filter((r) => !seen.has(r.id)).map((r) => r.id)
					this._send({ type: 'adopt', base: true, put, remove, schema })
				} else {
					const records = recs.map(plain)
					for (const r of records) this.server.set(r.id, r)
					this._send({ type: 'adopt', records, schema })
				}
			} else {
				for (const r of msg.document[this.adapter.recordsKey]) this.server.set(r.id, r)
				// what the editor normalized while loading goes back as a diff (records the service holds
				// but the editor dropped, or changed, are the editor's edits)
				const fake = new Map(this.server)
				this.shadow = new Map([...fake].map(([id, r]) => [id, { obj: null, copy: r }]))
				this._local(null, 'load')
			}
			this._setStatus('open')
			this._presence(true)
			this._wake()
			return
		}
		if (msg.mode === 'resume') {
			for (const ch of msg.changes || []) this._changes(ch)
			this._resend(msg.acked)
			this._setStatus('open')
			this._presence(true)
			this._wake()
			return
		}
		if (msg.mode === 'snapshot') {
			// the service's whole document (it could not replay what this editor missed)
			this.server = new Map(msg.document[this.adapter.recordsKey].map((r) => [r.id, r]))
			this.version = msg.version
			this._dropAcked(msg.acked)
			const ids = new Set([...this.server.keys(), ...this.adapter.records().map((r) => r.id)])
			this._rebase(ids, false)
			this._resend(msg.acked)
			this._setStatus('open')
			this._presence(true)
			this._wake()
		}
	}

	_dropAcked(acked) {
		if (typeof acked === 'number') this.pending = this.pending.filter((e) => e.seq > acked)
	}

	_resend(acked) {
		this._dropAcked(acked)
		for (const e of this.pending) {
			const { putById, patchById, removeSet, ...msg } = e
			this._send({ ...msg, base: this.version })
		}
		this._local(null)
	}

	_changes(msg) {
		if (!this.loaded) return
		if (typeof msg.version === 'number' && this.version !== null && msg.version <= this.version) return
		const ids = new Set([...(msg.put || []).map((r) => r.id), ...(msg.remove || [])])
		// the person's edits to these records not sent yet go first (they are ordered after)
		this._local([...ids].filter((id) => this._editedLocally(id)))
		for (const r of msg.put || []) this.server.set(r.id, r)
		for (const id of msg.remove || []) this.server.delete(id)
		if (typeof msg.version === 'number') this.version = msg.version
		if (msg.session === this.session && typeof msg.ack === 'number') this._dropAcked(msg.ack)
		if (msg.adopted === this.session) this.adopting = false
		for (const e of this.pending) {
			for (const id of e.putById.keys()) ids.add(id)
			for (const id of e.patchById.keys()) ids.add(id)
			for (const id of e.removeSet) ids.add(id)
		}
		this._rebase(ids, !!msg.undoable)
		if (msg.by === 'agent' && msg.undoable) this._normalized(ids)
		this._setStatus(this.status)
		this._wake()
	}

	_editedLocally(id) {
		const cur = this.adapter.get(id)
		const known = this.shadow.get(id)
		if (cur === undefined || known === undefined) return (cur === undefined) !== (known === undefined)
		return this.adapter.changed(known, cur)
	}

	// Bring the editor's records `ids` to the service's value with the pending edits over it.
	_rebase(ids, undoable) {
		const a = this.adapter
		const put = []
		const remove = []
		const want = new Map()
		for (const id of ids) {
			const v = replay(this.server.get(id), this.pending, id)
			want.set(id, v)
			const cur = a.get(id)
			if (v === undefined) {
				if (cur !== undefined) remove.push(id)
			} else if (cur === undefined || !deepEqual(a.comparable(cur), v)) {
				put.push(v)
			}
		}
		if (put.length || remove.length) a.apply(put, remove, { undoable })
		for (const [id, v] of want) {
			const cur = a.get(id)
			if (cur === undefined) this.shadow.delete(id)
			else if (v !== undefined && deepEqual(a.comparable(cur), v)) this.shadow.set(id, { obj: cur, copy: a.copy(cur) })
			else this.shadow.set(id, { obj: null, copy: v === undefined ? {} : v }) // the editor changed it: found next
		}
	}

	// The editor's own changes to records it was just given by the agent (text measured, an arrow
	// restacked) are sent at once, as completing the agent's edit.
	_normalized(ids) {
		const changed = [...ids].filter((id) => this._editedLocally(id))
		if (changed.length) this._local(changed, 'normalize')
	}

	_error(msg) {
		this.errors.push(`${msg.code}: ${msg.message}`)
		if (this.onStatus) {
			try {
				this.onStatus({ status: this.status, version: this.version, error: `${msg.code}: ${msg.message}` })
			} catch {}
		}
		if (typeof msg.seq !== 'number') return
		// the service refused that edit: it is dropped, and the records it touched go back
		const refused = this.pending.find((e) => e.seq === msg.seq)
		this.pending = this.pending.filter((e) => e.seq !== msg.seq)
		const ids = new Set()
		if (refused) {
			for (const id of refused.putById.keys()) ids.add(id)
			for (const id of refused.patchById.keys()) ids.add(id)
			for (const id of refused.removeSet) ids.add(id)
		}
		const rv = msg.revert || {}
		for (const r of rv.put || []) {
			this.server.set(r.id, r)
			ids.add(r.id)
		}
		for (const id of rv.remove || []) {
			this.server.delete(id)
			ids.add(id)
		}
		this._rebase(ids, false)
		this._wake()
	}

	// ------------------------------------------------------------------ presence and pictures

	_presence(now = false) {
		if (!this.loaded || !this.adapter.presence) return
		const due = this._lastPresence + this.presenceMs - Date.now()
		if (!now && due > 0) {
			if (!this._presenceTimer) this._presenceTimer = setTimeout(() => ((this._presenceTimer = null), this._presence(true)), due)
			return
		}
		this._lastPresence = Date.now()
		const p = this.adapter.presence()
		if (p) this._send({ type: 'presence', ...p })
	}

	// The service moved the person's view (an agent's set_viewport, or its undo). The adapter's
	// setViewport returns true when the editor shows the new view at once (its presence goes now),
	// false when it did not move or draws it later (the editor's change notification sends it).
	_camera(msg) {
		if (!this.loaded || !this.adapter.setViewport) return
		if (!isViewport(msg.viewport)) {
			this.errors.push(`camera: viewport must be {x, y, w, h} with finite numbers, w and h > 0`)
			return
		}
		if (this.adapter.setViewport(msg.page ?? null, msg.viewport)) this._presence(true)
	}

	async _export(msg) {
		try {
			const img = await this.adapter.exportImage({ viewport: msg.viewport, format: msg.format || 'png' })
			this._send({ type: 'export_result', id: msg.id, ok: true, ...img })
		} catch (e) {
			this._send({ type: 'export_result', id: msg.id, ok: false, error: String(e && e.message ? e.message : e) })
		}
	}
}

// The view that shows the page box `viewport` {x, y, w, h} on a screen of `screen` {w, h} pixels:
// the whole box, centered, at the largest zoom that fits it. Returns {x, y, z}: the page point at
// the screen's top left and the zoom (screen pixels per page unit).
export function fitViewport(viewport, screen) {
	const z = Math.min(screen.w / viewport.w, screen.h / viewport.h)
	const w = screen.w / z
	const h = screen.h / z
	return { x: viewport.x + (viewport.w - w) / 2, y: viewport.y + (viewport.h - h) / 2, z }
}

const isViewport = (v) =>
	isObject(v) && ['x', 'y', 'w', 'h'].every((k) => Number.isFinite(v[k])) && v.w > 0 && v.h > 0

// A blob as base64 (for pictures sent to the service).
export async function blobToBase64(blob) {
	const buf = new Uint8Array(await blob.arrayBuffer())
	let s = ''
	for (let i = 0; i < buf.length; i += 0x8000) s += String.fromCharCode.apply(null, buf.subarray(i, i + 0x8000))
	return btoa(s)
}

// The live URL of a document on the server that served this page.
export function liveUrl(name, base = globalThis.location?.href) {
	const u = new URL(`/v1/documents/${encodeURIComponent(name)}/live`, base)
	u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:'
	return u.toString()
}
