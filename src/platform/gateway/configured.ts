import type { Logger } from '../log.ts';
import { createOpenAiEmbedder, type Embedder } from './embedder.ts';
import { createOfflineEmbedder } from './offline-embedder.ts';

/** The embedder settings every service reads the same way (SVC_EMBED_URL, _API_KEY, _MODEL, _DIM, _BATCH_SIZE). */
export type EmbedSettings = {
  EMBED_URL?: string | undefined;
  EMBED_API_KEY?: string | undefined;
  EMBED_MODEL: string;
  EMBED_DIM: number;
  EMBED_BATCH_SIZE?: number;
};

/**
 * The gateway's embedder when SVC_EMBED_URL is set, else the offline one of the same dimension. Retrieval embeds
 * chunks and imports with it, explore the phrase of semantic_distance: one function, so the two agree on a vector.
 */
export function configuredEmbedder(settings: EmbedSettings, logger: Logger): Embedder {
  if (!settings.EMBED_URL) {
    logger.warn('SVC_EMBED_URL is not set: using the offline embedder (feature hashing), the offline fallback');
    return createOfflineEmbedder(settings.EMBED_DIM);
  }
  return createOpenAiEmbedder({
    baseURL: settings.EMBED_URL,
    model: settings.EMBED_MODEL,
    dim: settings.EMBED_DIM,
    ...(settings.EMBED_BATCH_SIZE ? { batchSize: settings.EMBED_BATCH_SIZE } : {}),
    ...(settings.EMBED_API_KEY ? { apiKey: settings.EMBED_API_KEY } : {}),
  });
}
