// What the server wiring needs of admission webhooks: the two plugin factories and a lazily made CEL evaluator.

export { createMutatingWebhookPlugin, createValidatingWebhookPlugin, type WebhookDeps, type WebhookPluginLifecycle } from './plugins.js'
export { lazyExpressionEvaluator } from './lazy-evaluator.js'
