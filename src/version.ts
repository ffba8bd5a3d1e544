// What GET / reports. `version` is the Qdrant release whose REST API Quiver implements, so
// clients' compatibility checks pass (the build's commit: telemetry/build-commit.ts).
export const VERSION = '1.19.0';
export const TITLE = 'qdrant - vector search engine';
