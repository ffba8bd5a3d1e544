// What GET / reports. `version` is the Qdrant release whose REST API Quiver implements, so
// clients' compatibility checks pass; `commit` identifies Quiver's own build.
export const VERSION = '1.19.0';
export const TITLE = 'qdrant - vector search engine';
export const COMMIT = 'quiver-0.1.0';
