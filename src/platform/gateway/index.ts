// The AI gateway port: embeddings, chat and the model list. Real adapters speak to any OpenAI-compatible gateway
// through the `openai` SDK; the offline embedder is the embedded default (lexical feature hashing).
export { GatewayError } from './errors.ts';
export { createOpenAiEmbedder, type Embedder, type OpenAiEmbedderOptions } from './embedder.ts';
export { createOfflineEmbedder, OFFLINE_MODEL } from './offline-embedder.ts';
export { configuredEmbedder, type EmbedSettings } from './configured.ts';
export {
  createOpenAiChat,
  type ChatModel,
  type ChatMessage,
  type ChatRequest,
  type ChatResult,
  type ChatUsage,
  type GatewayModel,
  type OpenAiChatOptions,
} from './chat.ts';
