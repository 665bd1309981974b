// Sending what a person entered: uploads first (for file fields), then the answer. A
// refusal is turned into what the UI shows (field errors in place, the request staying
// pending); a request closed meanwhile is reported, never retried.

import { ApiError, InvalidInput, NotPending, PawflowClient, errorText } from "./client";
import type { FromPage, ToPage } from "./webview";
import type { FieldError, Interaction, Json } from "./wire";

export type Outcome =
  | { ok: true; interaction: Interaction }
  | { ok: false; refused: true; message: string; errors: FieldError[] }
  | { ok: false; refused: false; status: string | null; message: string };

/** Respond, mapping the server's refusals to an outcome the UI can show. */
export async function send(client: PawflowClient, requestId: string, answer: Json): Promise<Outcome> {
  try {
    return { ok: true, interaction: await client.respond(requestId, answer) };
  } catch (error) {
    return refusal(error);
  }
}

function refusal(error: unknown): Outcome {
  if (error instanceof InvalidInput) {
    const message = error.fieldErrors.length ? errorText(error.fieldErrors) : error.message;
    return { ok: false, refused: true, message, errors: error.fieldErrors };
  }
  if (error instanceof NotPending) {
    return { ok: false, refused: false, status: error.current, message: `This request was already ${error.current ?? "closed"}.` };
  }
  if (error instanceof ApiError) return { ok: false, refused: false, status: null, message: error.message };
  throw error;
}

/** A `submit` from the webview page: upload its files, then answer. */
export async function submitFromPage(
  client: PawflowClient,
  record: Interaction,
  message: Extract<FromPage, { type: "submit" }>,
): Promise<Outcome> {
  let answer = message.answer as Json;
  const files = Object.entries(message.files ?? {});
  if (files.length && answer !== null && typeof answer === "object" && !Array.isArray(answer)) {
    const filled: { [key: string]: Json } = { ...answer };
    for (const [field, file] of files) {
      try {
        const ref = await client.upload(file.name, new Uint8Array(Buffer.from(file.base64, "base64")), {
          requestId: record.id,
          field,
          mediaType: file.mediaType,
        });
        filled[field] = ref.id;
      } catch (error) {
        const outcome = refusal(error);
        // An upload's own errors name "file": they belong beside the form's field.
        if (!outcome.ok && outcome.refused) {
          const errors = outcome.errors.map((e) => ({ path: field, message: e.message }));
          return { ...outcome, errors };
        }
        return outcome;
      }
    }
    answer = filled;
  }
  return send(client, record.id, answer);
}

/** What the page is told about an outcome. */
export function toPage(outcome: Outcome): ToPage {
  if (outcome.ok) return { type: "closed", status: outcome.interaction.status };
  if (outcome.refused) return { type: "refused", message: outcome.message, errors: outcome.errors };
  return outcome.status
    ? { type: "closed", status: outcome.status }
    : { type: "refused", message: outcome.message, errors: [] };
}
