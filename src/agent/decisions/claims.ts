/**
 * Phrases with which an agent claims to have reached a limit ("memory-bound", "close to the peak",
 * "cannot be made faster", "optimal"). Each pattern is matched per sentence; the sentence is kept as
 * the evidence shown to people and stored with the question that answers it.
 */
const CLAIM_PATTERNS: RegExp[] = [
  /\b(?:near|at|close to|reached|reaching|hit|hitting|approach(?:ing|es)?|saturat(?:e|es|ed|ing))\b[^.!?\n]{0,50}\b(?:limit|ceiling|peak|roofline|bound|maximum|max)\b/i,
  /\b(?:memory|bandwidth|compute|latency|hardware|launch[- ]overhead|overhead|dram|throughput)[- ]bound\b/i,
  /\b(?:can(?:no|')t|cannot|unable to|impossible to|no way to|won't be able to)\b[^.!?\n]{0,60}\b(?:faster|improve|further|better|beat|speed ?up|optimi[sz]e|gain)\b/i,
  /\b(?:already|is|are|essentially|effectively|likely|probably|near(?:ly)?)\s+(?:optimal|at the limit|as fast as (?:it|this) (?:can|gets))\b/i,
  /\b(?:fundamental(?:ly)?|hard|physical|theoretical|hardware)\s+(?:limit|bound|ceiling|maximum|peak)\b/i,
  /\bno (?:further|more|remaining) (?:room|headroom|gains?|improvements?|optimi[sz]ations?)\b/i,
  /\bdiminishing returns\b/i,
  /\b(?:limited|capped) by (?:the )?(?:hardware|memory bandwidth|bandwidth|the device|the gpu|the cpu)\b/i,
];

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The first sentence of `text` that claims a limit, or null. */
export function findLimitClaim(text: string): string | null {
  for (const sentence of sentences(text)) {
    if (CLAIM_PATTERNS.some((p) => p.test(sentence))) return sentence.length > 300 ? `${sentence.slice(0, 297)}...` : sentence;
  }
  return null;
}
