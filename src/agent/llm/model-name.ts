// Model names arrive in the litellm style OpenHands clients use (`openai/gpt-4o`,
// `litellm_proxy/claude`, `anthropic/claude-sonnet`). The endpoint the user configured is an
// OpenAI-compatible one, so the provider prefix names the route, not part of the model id.
const PROVIDER_PREFIXES = ['openai', 'litellm_proxy', 'anthropic', 'openrouter', 'azure', 'gemini', 'mistral', 'groq', 'deepseek', 'ollama', 'hosted_vllm', 'together_ai'];

export function endpointModelName(model: string): string {
  const slash = model.indexOf('/');
  if (slash < 0) return model;
  const prefix = model.slice(0, slash);
  return PROVIDER_PREFIXES.includes(prefix) ? model.slice(slash + 1) : model;
}
