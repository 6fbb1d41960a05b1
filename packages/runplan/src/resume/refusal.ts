/** Why a run cannot be resumed, continued or started: `run` exits 3 with it, having written nothing. */
export interface Refusal {
  reason: string;
  message: string;
  hint?: string;
}
