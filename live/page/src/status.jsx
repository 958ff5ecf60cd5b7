// A small badge in the corner of the live page: is the document connected to the service?
import React, { useEffect, useState } from 'react'

const COLORS = { open: '#2f9e44', connecting: '#f08c00', reconnecting: '#f08c00', refused: '#e03131', failed: '#e03131', closed: '#868e96' }

export function Status({ subscribe }) {
	const [s, setS] = useState({ status: 'connecting' })
	useEffect(() => subscribe(setS), [subscribe])
	const color = COLORS[s.status] || '#868e96'
	return (
		<div
			data-testid="spatialobs-live-status"
			data-status={s.status}
			title={s.error || ''}
			style={{
				position: 'fixed', right: 8, bottom: 8, zIndex: 100000, pointerEvents: 'none',
				font: '12px system-ui, sans-serif', color: '#1e1e1e', background: 'rgba(255,255,255,.85)',
				borderRadius: 4, padding: '2px 6px', boxShadow: '0 0 0 1px rgba(0,0,0,.1)',
			}}
		>
			<span style={{ display: 'inline-block', width: 8, height: 8, borderRadius: 4, background: color, marginRight: 5 }} />
			spatialobs live · {s.status}
			{typeof s.version === 'number' ? ` · v${s.version}` : ''}
		</div>
	)
}

// Status updates from the sync client, to the badge and to anyone who asks.
export function statusHub() {
	let last = { status: 'connecting' }
	const subs = new Set()
	return {
		onStatus(s) {
			last = s
			for (const f of subs) f(s)
		},
		subscribe(f) {
			subs.add(f)
			f(last)
			return () => subs.delete(f)
		},
	}
}

// The page's settings: the document (from the server's page) and the token (from the URL).
export function pageConfig() {
	const cfg = window.SPATIALOBS_LIVE || {}
	const url = new URL(window.location.href)
	const hash = new URLSearchParams(url.hash.slice(1))
	return { ...cfg, token: hash.get('token') || url.searchParams.get('token') || null }
}
