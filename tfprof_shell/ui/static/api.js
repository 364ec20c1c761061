// The server's API: every call is same-origin, the cookie carries the session.

export class ApiError extends Error {}

async function answer(response) {
  let body;
  try {
    body = await response.json();
  } catch (e) {
    throw new ApiError(`the server answered ${response.status} without JSON`);
  }
  if (!response.ok) throw new ApiError(body.error || `error ${response.status}`);
  return body;
}

/** POST a JSON object to an /api/ path; resolves to the answer or throws ApiError. */
export async function post(path, body) {
  const response = await fetch(path, {
    method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
  });
  return answer(response);
}

/** GET an /api/ path with query parameters. */
export async function get(path, params) {
  const query = params ? "?" + new URLSearchParams(params).toString() : "";
  return answer(await fetch(path + query, {credentials: "same-origin"}));
}

/** Run a shell line; `text` also asks for the shell's text. */
export function run(line, text = false) {
  return post("/api/run", {line, text});
}
