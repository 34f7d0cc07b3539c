import type { webApi } from '@slack/bolt';
import type { Operation, PostResult } from './types.js';

type WebClient = webApi.WebClient;

/** Makes the one Web API call (or, for a file, the upload v2 sequence) an operation stands for. Throws Slack's errors. */
export async function sendOperation(client: WebClient, op: Operation): Promise<PostResult> {
  switch (op.kind) {
    case 'chat.postMessage': {
      const p = op.payload;
      const res = await client.chat.postMessage({
        channel: p.channel,
        text: p.text,
        ...(p.threadTs ? { thread_ts: p.threadTs } : {}),
        ...(p.blocks ? { blocks: p.blocks } : {}),
        unfurl_links: false,
        unfurl_media: false,
      });
      return { ok: true, ...(res.ts ? { ts: res.ts } : {}) };
    }
    case 'chat.update': {
      const p = op.payload;
      await client.chat.update({ channel: p.channel, ts: p.ts, text: p.text, ...(p.blocks ? { blocks: p.blocks } : {}) });
      return { ok: true, ts: p.ts };
    }
    case 'chat.postEphemeral': {
      const p = op.payload;
      const res = await client.chat.postEphemeral({
        channel: p.channel,
        user: p.user,
        text: p.text,
        ...(p.threadTs ? { thread_ts: p.threadTs } : {}),
        ...(p.blocks ? { blocks: p.blocks } : {}),
      });
      return { ok: true, ...(res.message_ts ? { ts: res.message_ts } : {}) };
    }
    case 'files.upload': {
      const p = op.payload;
      const content = typeof p.content === 'string' ? Buffer.from(p.content, 'utf8') : p.content;
      const args = {
        channel_id: p.channel,
        file: content,
        filename: p.filename,
        ...(p.threadTs ? { thread_ts: p.threadTs } : {}),
        ...(p.title ? { title: p.title } : {}),
        ...(p.initialComment ? { initial_comment: p.initialComment } : {}),
      };
      const res = (await client.filesUploadV2(args as Parameters<WebClient['filesUploadV2']>[0])) as { files?: { files?: { id?: string }[] }[] };
      const fileId = res.files?.[0]?.files?.[0]?.id;
      return { ok: true, ...(fileId ? { fileId } : {}) };
    }
    case 'assistant.threads.setStatus': {
      const p = op.payload;
      await client.assistant.threads.setStatus({
        channel_id: p.channel,
        thread_ts: p.threadTs,
        status: p.status,
        ...(p.loadingMessages?.length ? { loading_messages: p.loadingMessages.slice(0, 10) } : {}),
      });
      return { ok: true };
    }
    case 'chat.unfurl': {
      const p = op.payload;
      // Work Objects go as `metadata`; a workspace without them gets the plain `unfurls` (the poster's caller decides).
      const args = p.entities
        ? { channel: p.channel, ts: p.ts, metadata: { entities: p.entities } }
        : { channel: p.channel, ts: p.ts, unfurls: p.unfurls ?? {} };
      await client.chat.unfurl(args as Parameters<WebClient['chat']['unfurl']>[0]);
      return { ok: true };
    }
    case 'views.publish': {
      const p = op.payload;
      await client.views.publish({ user_id: p.user, view: p.view });
      return { ok: true };
    }
    case 'reactions.add': {
      const p = op.payload;
      try {
        await client.reactions.add({ channel: p.channel, timestamp: p.ts, name: p.name });
      } catch (error) {
        if ((error as { data?: { error?: string } }).data?.error === 'already_reacted') return { ok: true };
        throw error;
      }
      return { ok: true };
    }
  }
}
