// Package dashboard holds the operator's dashboard that the gateway serves at /admin/:
// hand-written HTML, CSS and JavaScript (an SVG chart drawn by hand, no UI library),
// embedded in the binary. Nothing is fetched from elsewhere at run time and nothing is
// built: the files here are what the browser gets.
//
// The page reads the admin API only (GET /admin/events, /admin/requests,
// /admin/profiles, /admin/tools, /admin/tools/search; DELETE /admin/threads), with the
// session cookie the gateway sets once the admin key is given. It shows no prompt or
// argument: the API it reads holds none.
package dashboard

import "embed"

// Files are the dashboard's files: index.html (the page), login.html (the sign-in
// form, an html/template), app.css and app.js.
//
//go:embed index.html login.html app.css app.js
var Files embed.FS
