// The ready live page for an Excalidraw document: the real <Excalidraw> editor connected to the service.
import React from 'react'
import { createRoot } from 'react-dom/client'
import { Excalidraw } from '@excalidraw/excalidraw'
import '@excalidraw/excalidraw/index.css'
import { connectExcalidraw } from '@spatialobs/excalidraw-live'
import { Status, pageConfig, statusHub } from './status.jsx'

const cfg = pageConfig()
const hub = statusHub()

function App() {
	return (
		<>
			<Excalidraw
				excalidrawAPI={(api) => {
					if (window.excalidrawAPI === api) return
					window.excalidrawAPI = api
					window.spatialobsLive = connectExcalidraw(api, {
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
