// Each body's validators, when the server runs from source (tests, `node --import tsx src/main.ts`):
// the build's generated validators (build/validators.js) when they were generated from the
// schemas as they are now (same fingerprint), else compiled here with Ajv, as before there was a
// build step (slow: seconds). The server bundle (build/server, `npm start`) does not contain this
// module: the bundler puts in its place one that takes the validators generated in the same build,
// without this check and without Ajv's compiler (src/cli/build-server.ts).

import { BODY_SCHEMAS, validatorFingerprint, type BodyName } from './body-schemas.js';
import { readGeneratedValidators, type CompiledBodies } from './validator-module.js';

async function load(): Promise<CompiledBodies> {
  const generated = readGeneratedValidators();
  if (generated !== null && generated.fingerprint === validatorFingerprint()) return generated.bodies(Object.keys(BODY_SCHEMAS) as BodyName[]);
  const { compileBodies } = await import('./validator-compiler.js');
  return compileBodies();
}

export const COMPILED_BODIES: CompiledBodies = await load();
