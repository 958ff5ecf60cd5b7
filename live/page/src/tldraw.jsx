// The ready live page for a tldraw document: the real <Tldraw> editor connected to the service.
import React from 'react'
import { createRoot } from 'react-dom/client'
import { Tldraw } from 'tldraw'
import { getAssetUrls } from '@tldraw/assets/selfHosted'
import 'tldraw/tldraw.css'
import { connectTldraw } from '@spatialobs/tldraw-live'
import { Status, pageConfig, statusHub } from './status.jsx'

const cfg = pageConfig()
const hub = statusHub()
// tldraw's fonts, icons and translations come from this server, never from a CDN
const assetUrls = getAssetUrls({ baseUrl: new URL(`${cfg.assets}tldraw/`, window.location.href).href })

function App() {
	return (
		<>
			<Tldraw
				assetUrls={assetUrls}
				onMount={(editor) => {
					window.editor = editor
					window.spatialobsLive = connectTldraw(editor, {
						document: cfg.document,
						token: cfg.token,
						fitOnLoad: true,
						onStatus: hub.onStatus,
					})
				}}
			/>
			<Status subscribe={hub.subscribe} />
		</>
	)
}

createRoot(document.getElementById('root')).render(<App />)
