// The API reference page (/docs): Swagger UI, served from this server so it works offline.
// A file of its own rather than an inline script, as a strict Content-Security-Policy needs.
"use strict";

window.addEventListener("DOMContentLoaded", () => {
  const root = document.getElementById("swagger-ui");
  window.SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    domNode: root,
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
  });
});
