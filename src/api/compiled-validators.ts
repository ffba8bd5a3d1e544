// Each body's validators, when the server runs from source (tests, `node --import tsx src/main.ts`):
// the build's generated validators (build/validators.js) when they were generated from the
// schemas as they are now (same fingerprint), else compiled here with Ajv, as before there was a
// build step (slow: seconds). The server bundle (build/server, `npm start`) does not contain this
// module: the bundler puts in its place one that has the validators generated in the same build
// ready as it loads, without this check and without Ajv's compiler (src/cli/build-server.ts).

import { BODY_NAMES, validatorFingerprint, type ValidatorSources } from './body-schemas.js';
import { compileBodies } from './validator-compiler.js';
import { readGeneratedValidators, type CompiledBodies } from './validator-module.js';

export function compiledBodies(sources: ValidatorSources): CompiledBodies {
  const generated = readGeneratedValidators();
  if (generated !== null && generated.fingerprint === validatorFingerprint(sources)) return generated.bodies(BODY_NAMES);
  return compileBodies(sources);
}
