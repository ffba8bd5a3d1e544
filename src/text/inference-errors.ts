// The errors Qdrant answers around BM25 inference, worded as Qdrant words them:
// - a Document (or Image/Object) for any model other than its local BM25, when no external
//   inference service is configured (Quiver has none): a service error
//   (src/common/inference/infer_processing.rs);
// - an Image or Object given to the BM25 model (src/common/inference/local_model.rs).

import { BadInput, ServiceError } from '../errors.js';

export function inferenceServiceUnavailable(): ServiceError {
  return new ServiceError('InferenceService is not initialized. Please check if it was properly configured and initialized during startup.');
}

export function textOnlyModel(model: string): BadInput {
  return new BadInput(`Only text input is supported for ${model}.`);
}
