// The errors Qdrant answers around BM25 inference, worded as Qdrant words them
// (src/common/inference/service.rs and local_model.rs):
// - a Document (or Image/Object) for any model other than the local BM25 one, when no external
//   inference address is configured (Quiver has none): the inference service is always set up,
//   since BM25 needs no address, so the request fails when it is sent on, as a service error;
// - an Image or Object given to the BM25 model.

import { BadInput, ServiceError } from '../errors.js';

export function inferenceServiceUnavailable(): ServiceError {
  return new ServiceError('InferenceService URL not configured - please provide valid address in config');
}

export function textOnlyModel(model: string): BadInput {
  return new BadInput(`Only text input is supported for ${model}.`);
}
