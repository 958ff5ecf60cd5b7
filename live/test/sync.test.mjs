// Unit tests of @spatialobs/live-sync: patches, and the client's ordering rules against a scripted service.
// (The real service and the real editors are tested end to end by the Python suite, tests/live.)
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { LiveSync, applyPatch, deepEqual, diffRecord, fitViewport } from '@spatialobs/live-sync'

test('a patch takes one record to another, field by field and one level into props and meta', () => {
	const a = { id: 'shape:a', x: 1, y: 2, props: { w: 10, color: 'red', text: 'x' }, meta: {} }
	const b = { id: 'shape:a', x: 5, y: 2, props: { w: 10, color: 'blue', extra: [1, 2] }, meta: { k: 1 }, isLocked: true }
	const p = diffRecord(a, b)
	assert.deepEqual(p, { id: 'shape:a', set: { x: 5, 'props.color': 'blue', 'props.extra': [1, 2], 'meta.k': 1, isLocked: true }, unset: ['props.text'] })
	assert.deepEqual(applyPatch(a, p), b)
	assert.equal(diffRecord(a, { ...a }), null)
	assert.equal(a.props.text, 'x') // the record itself is left as it was
})

test('random records: applyPatch(a, diffRecord(a, b)) is b', () => {
	let seed = 7
	const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
	const val = () => [1, 'a', null, true, [1, { z: 2 }], { q: rnd() }][Math.floor(rnd() * 6)]
	const rec = () => {
		const r = { id: 'e' }
		for (const k of ['x', 'y', 'w', 'type']) if (rnd() < 0.7) r[k] = val()
		for (const k of ['props', 'meta']) {
			if (rnd() < 0.7) {
				r[k] = {}
				for (const kk of ['a', 'b', 'c']) if (rnd() < 0.6) r[k][kk] = val()
			}
		}
		return r
	}
	for (let i = 0; i < 500; i++) {
		const a = rec()
		const b = rec()
		const p = diffRecord(a, b)
		assert.ok(deepEqual(p ? applyPatch(a, p) : a, b), JSON.stringify({ a, b, p }))
	}
})

// An editor of plain records, and a socket that records what is sent.
function fakeEditor(records) {
	const store = new Map(records.map((r) => [r.id, r]))
	let listener = null
	const applied = []
	return {
		store,
		applied,
		edit(r) {
			store.set(r.id, r)
			listener && listener([r.id])
		},
		remove(id) {
			store.delete(id)
			listener && listener([id])
		},
		adapter: {
			format: 'tldraw',
			recordsKey: 'records',
			records: () => [...store.values()],
			get: (id) => store.get(id),
			changed: (known, cur) => known.obj !== cur,
			copy: (r) => r,
			comparable: (r) => r,
			schema: () => ({ schemaVersion: 2 }),
			load(doc) {
				store.clear()
				for (const r of doc.records) store.set(r.id, r)
			},
			apply(put, remove, { undoable }) {
				applied.push({ put: put.map((r) => r.id), remove, undoable })
				for (const r of put) store.set(r.id, { ...r })
				for (const id of remove) store.delete(id)
			},
			subscribe(f) {
				listener = f
				return () => (listener = null)
			},
		},
	}
}

function fakeSocketClass(sent) {
	return class {
		constructor(url) {
			this.url = url
			this.readyState = 1
			FakeSocket.last = this
			queueMicrotask(() => this.onopen && this.onopen())
		}
		send(text) {
			sent.push(JSON.parse(text))
		}
		close() {}
		deliver(msg) {
			this.onmessage({ data: JSON.stringify(msg) })
		}
	}
}
const FakeSocket = {}
const tick = () => new Promise((r) => setTimeout(r, 5))

async function connected(records) {
	const sent = []
	const ed = fakeEditor([])
	const sync = new LiveSync({ url: 'ws://127.0.0.1:1/v1/documents/d/live', adapter: ed.adapter, session: 's1', WebSocket: fakeSocketClass(sent) }).start()
	await tick()
	const ws = FakeSocket.last
	ws.deliver({ type: 'hello', session: 's1', epoch: 'e', mode: 'load', version: 0, acked: 0, document: { records } })
	await tick()
	ws.deliver({ type: 'changes', version: 1, by: 'service', session: null, adopted: 's1', put: [], remove: [], undoable: false })
	await tick()
	return { sent, ed, sync, ws }
}

test('the first editor loads the document and sends back only what it made different', async () => {
	const { sent, sync } = await connected([{ id: 'shape:a', x: 0 }, { id: 'shape:b', x: 1 }])
	assert.equal(sent[0].type, 'hello')
	assert.deepEqual(sent[1], { type: 'adopt', base: true, put: [], remove: [], schema: { schemaVersion: 2 } })
	assert.equal(sync.version, 1)
	await sync.settled(100)
})

test("the person's edit made while an agent's apply is in flight is kept on top of it", async () => {
	const { sent, ed, sync, ws } = await connected([{ id: 'shape:a', x: 0, y: 0 }])
	ed.edit({ id: 'shape:a', x: 50, y: 0 }) // the person moves it; the service has not answered yet
	const diff = sent.at(-1)
	assert.deepEqual([diff.type, diff.seq, diff.patch], ['diff', 1, [{ id: 'shape:a', set: { x: 50 } }]])
	// the agent's apply (made before the service saw the person's edit) arrives first
	ws.deliver({ type: 'changes', version: 2, by: 'agent', session: null, put: [{ id: 'shape:a', x: 0, y: 99 }], remove: [], undoable: true })
	await tick()
	assert.deepEqual(ed.store.get('shape:a'), { id: 'shape:a', x: 50, y: 99 }) // both: the agent's y, the person's x
	assert.equal(ed.applied.at(-1).undoable, true)
	// then the service's ordering of the person's edit, acknowledged
	ws.deliver({ type: 'changes', version: 3, by: 'person', session: 's1', ack: 1, put: [{ id: 'shape:a', x: 50, y: 99 }], remove: [], undoable: false })
	await tick()
	assert.equal(sync.pending.length, 0)
	assert.deepEqual(ed.store.get('shape:a'), { id: 'shape:a', x: 50, y: 99 })
	assert.equal(sent.filter((m) => m.type === 'diff').length, 1) // nothing echoed back
})

test('an edit the service refuses is taken back in the editor', async () => {
	const { sent, ed, sync, ws } = await connected([{ id: 'shape:a', x: 0 }])
	ed.edit({ id: 'shape:a', x: 7, bad: true })
	const seq = sent.at(-1).seq
	ws.deliver({ type: 'error', code: 'bad_request', message: 'refused', seq, revert: { put: [{ id: 'shape:a', x: 0 }], remove: [] } })
	await tick()
	assert.deepEqual(ed.store.get('shape:a'), { id: 'shape:a', x: 0 })
	assert.equal(sync.pending.length, 0)
	assert.deepEqual(sync.errors, ['bad_request: refused'])
})

test('after a drop the client resumes from its version and sends again what was not acknowledged', async () => {
	const { sent, ed, sync, ws } = await connected([{ id: 'shape:a', x: 0 }])
	ws.readyState = 3 // the socket is gone: edits wait
	ed.edit({ id: 'shape:a', x: 1 })
	ed.edit({ id: 'shape:b', x: 2 })
	assert.equal(sync.pending.length, 2)
	ws.onclose({ code: 1006 })
	await new Promise((r) => setTimeout(r, 120))
	const ws2 = FakeSocket.last
	assert.notEqual(ws2, ws)
	const hello = sent.at(-1)
	assert.deepEqual([hello.type, hello.version, hello.epoch], ['hello', 1, 'e'])
	ws2.deliver({ type: 'hello', session: 's1', epoch: 'e', mode: 'resume', version: 2, acked: 1, changes: [
		{ type: 'changes', version: 2, by: 'person', session: 's1', ack: 1, put: [{ id: 'shape:a', x: 1 }], remove: [], undoable: false }] })
	await tick()
	const resent = sent.filter((m) => m.type === 'diff').at(-1)
	assert.equal(resent.seq, 2)
	assert.deepEqual(resent.put, [{ id: 'shape:b', x: 2 }])
	assert.equal(sync.version, 2)
	sync.stop()
})

test('fitViewport shows the whole box, centered, at the zoom that fits the screen', () => {
	assert.deepEqual(fitViewport({ x: 100, y: 50, w: 640, h: 360 }, { w: 1280, h: 720 }), { x: 100, y: 50, z: 2 })
	// a taller screen: the box's width fills it, the box is centered vertically
	assert.deepEqual(fitViewport({ x: 0, y: 0, w: 400, h: 200 }, { w: 800, h: 800 }), { x: 0, y: -100, z: 2 })
	// a wider screen: the box's height fills it
	assert.deepEqual(fitViewport({ x: 10, y: 20, w: 100, h: 100 }, { w: 400, h: 200 }), { x: -40, y: 20, z: 2 })
})

test("the service's camera message moves the editor's view and the new view is reported at once", async () => {
	const { sent, ed, sync, ws } = await connected([{ id: 'shape:a', x: 0 }])
	const moved = []
	let view = { x: 0, y: 0, w: 1280, h: 720 }
	ed.adapter.setViewport = (page, vp) => {
		moved.push([page, vp])
		if (page !== 'page:page') return false
		view = { ...vp }
		return true
	}
	ed.adapter.presence = () => ({ page: 'page:page', viewport: view, selected: [] })
	assert.equal(sent[0].protocol, 2)
	ws.deliver({ type: 'camera', by: 'agent', page: 'page:page', viewport: { x: 10, y: 20, w: 640, h: 360 }, zoom: 2 })
	await tick()
	assert.deepEqual(moved, [['page:page', { x: 10, y: 20, w: 640, h: 360 }]])
	assert.deepEqual(sent.at(-1), { type: 'presence', page: 'page:page', viewport: { x: 10, y: 20, w: 640, h: 360 }, selected: [] })
	const n = sent.length
	// another page's camera: the view stays, nothing is reported
	ws.deliver({ type: 'camera', by: 'agent', page: 'page:other', viewport: { x: 0, y: 0, w: 10, h: 10 } })
	// a malformed camera: ignored, and said in the errors
	ws.deliver({ type: 'camera', by: 'agent', page: 'page:page', viewport: { x: 0, y: 0, w: 0, h: 10 } })
	await tick()
	assert.equal(moved.length, 2)
	assert.equal(sent.length, n)
	assert.deepEqual(sync.errors, ['camera: viewport must be {x, y, w, h} with finite numbers, w and h > 0'])
	assert.equal(sync.version, 1) // a camera is not a version
	sync.stop()
})
