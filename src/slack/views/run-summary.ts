import { describeEnd, type RunSummary, type RunView } from '../agent-port.js';
import { capText, escapeMrkdwn, INLINE_TEXT_CHARS } from '../poster/limits.js';
import type { ResultOffer } from '../results-port.js';
import type { KnownBlock } from './block-kit.js';
import { continueFromBestBlocks } from './continue-button.js';
import { context, fields, fmtDuration, fmtSpeedup, fmtUsd, header, section, STATUS_LABEL, withMentions, type SlackView } from './format.js';
import { renderResultActions } from './result-actions.js';

/** The final message of a run's thread; the best kernel and the chart follow it as files. */
export function renderRunSummary(run: RunView, summary: RunSummary, bestPeer: string | null, offer: ResultOffer | null = null): SlackView {
  const s = STATUS_LABEL[summary.status] ?? { emoji: ':grey_question:', label: summary.status };
  const why = summary.endReason ? ` — ${escapeMrkdwn(describeEnd(summary.endReason))}` : '';
  const blocks: KnownBlock[] = [header(`${run.id} ${s.label.toLowerCase()}`), section(`${s.emoji} *${s.label}*${why}`)];
  const best = summary.best;
  if (best) {
    const peer = best.speedupVsBestPeer != null ? ` and *${fmtSpeedup(best.speedupVsBestPeer)}* vs ${escapeMrkdwn(bestPeer ?? 'the strongest peer')}` : '';
    const goal = best.speedupVsBaseline >= run.target ? ' :dart: target reached' : ` (target ${fmtSpeedup(run.target)})`;
    // A quick run's best was chosen on its subset: not counted, and said so; the full-set check below is.
    const what = best.scenarioSet ? `Best kernel on the quick subset (${best.scenarioSet.evaluated} of ${best.scenarioSet.total} scenarios, not counted)` : 'Best kernel (counted: every scenario)';
    blocks.push(section(`:trophy: ${what}: *${fmtSpeedup(best.speedupVsBaseline)}* vs baseline${peer}, from eval #${best.evaluationSeq}${best.scenarioSet ? '' : goal}. It is attached below.`));
    if (best.scenarioSet) {
      const c = best.confirmation;
      const subset = `Chosen on ${best.scenarioSet.evaluated} of ${best.scenarioSet.total} scenarios`;
      blocks.push(
        section(
          !c
            ? `${subset}; not evaluated on the full set.`
            : c.correct
              ? `:white_check_mark: ${subset}; on all ${c.scenarios}: correct, *${fmtSpeedup(c.speedupVsBaseline ?? 0)}* vs baseline (counted).`
              : `:x: ${subset}; on all ${c.scenarios} it is *not correct* (${escapeMrkdwn(c.status)}${c.reason ? `: ${escapeMrkdwn(c.reason.slice(0, 300))}` : ''}).`,
        ),
      );
    }
  } else {
    blocks.push(section('No candidate was correct on every scenario, so there is no best kernel to attach.'));
  }
  blocks.push(
    fields([
      ['Evaluations', String(summary.evaluations)],
      ['Model steps', String(summary.steps)],
      ['Cost', fmtUsd(summary.costUsd)],
      ['Elapsed', fmtDuration(summary.elapsedSeconds)],
      ['Questions', `${summary.questions.human} from people, ${summary.questions.bank} from the bank`],
    ]),
  );
  const error = summary.error ? capText(summary.error, INLINE_TEXT_CHARS) : undefined;
  if (error) blocks.push(section(`:warning: ${withMentions(escapeMrkdwn(error.text))}`));
  // Where the history lives, by name only: a path on the server means nothing in a channel.
  if (best) blocks.push(context(`Every evaluated candidate is a commit in the run's git repository on the KernelSeek server${best.commit ? ` (this one: tag \`${best.commit.slice(0, 40)}\`)` : ''}. There, \`${summary.exportCommand ?? `kernelseek export ${run.id}`}\` writes the kernel, its diff against the baseline and the evidence.`));
  blocks.push(...renderResultActions(offer));
  blocks.push(...continueFromBestBlocks(run, summary));
  // The counted best (full set); a summary from before it was reported: a full-set run's best is it.
  const counted = summary.counted !== undefined ? summary.counted : best && !best.scenarioSet ? best : null;
  const bestText = counted
    ? `best ${fmtSpeedup(counted.speedupVsBaseline)} vs baseline`
    : best
      ? `best ${fmtSpeedup(best.speedupVsBaseline)} vs baseline on the quick subset (not counted)`
      : 'no correct candidate';
  return {
    text: `${run.id} ${s.label.toLowerCase()}: ${bestText}, ${summary.evaluations} evaluations, ${fmtUsd(summary.costUsd)}`,
    blocks,
    ...(error?.overflow ? { files: [{ filename: 'error.txt', content: error.overflow, title: 'Full error' }] } : {}),
  };
}
