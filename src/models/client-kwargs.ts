/**
 * model_kwargs that configure an API client (where to send, the key, headers, retries) rather than the request
 * body, for every OpenAI- and Anthropic-shaped client; each adds the keys of its own API.
 */
export const CLIENT_KWARGS = [
  "api_base",
  "base_url",
  "api_key",
  "extra_headers",
  "extra_body",
  "timeout",
  "stream",
  "drop_params",
  "num_retries",
  "max_retries",
] as const;
