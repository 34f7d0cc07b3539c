CREATE TABLE "agent_steps" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"seq" integer NOT NULL,
	"model" text NOT NULL,
	"request" jsonb NOT NULL,
	"response" jsonb,
	"stop_reason" text,
	"input_tokens" bigint DEFAULT 0 NOT NULL,
	"output_tokens" bigint DEFAULT 0 NOT NULL,
	"cache_read_tokens" bigint DEFAULT 0 NOT NULL,
	"cache_write_tokens" bigint DEFAULT 0 NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"latency_ms" integer,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "bank_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"text" text NOT NULL,
	"kind" text NOT NULL,
	"triggers" jsonb NOT NULL,
	"placeholders" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"source" text NOT NULL,
	"origin_question_id" bigint,
	"promoted_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"retired_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "digests" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"channel" text NOT NULL,
	"day" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"window_end" timestamp with time zone NOT NULL,
	"message_ts" text,
	"payload" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "evaluations" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" text,
	"seq" integer,
	"task" text NOT NULL,
	"job_id" text,
	"candidate_hash" text NOT NULL,
	"source" text NOT NULL,
	"scenarios" text DEFAULT 'all' NOT NULL,
	"status" text NOT NULL,
	"correct" boolean,
	"speedup_vs_baseline" double precision,
	"speedup_vs_best_peer" double precision,
	"result" jsonb,
	"gpu" text,
	"arch" text,
	"worker" text,
	"harness_seconds" double precision,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "questions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"source" text NOT NULL,
	"bank_id" text,
	"text" text NOT NULL,
	"author" text NOT NULL,
	"trigger" text,
	"evidence" jsonb,
	"external_id" text,
	"eval_seq_at_ask" integer DEFAULT 0 NOT NULL,
	"best_before" double precision,
	"best_after" double precision,
	"gain" double precision,
	"evals_after" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "run_messages" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"seq" integer NOT NULL,
	"role" text NOT NULL,
	"content" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" text PRIMARY KEY NOT NULL,
	"task" text NOT NULL,
	"owner" text NOT NULL,
	"origin" text NOT NULL,
	"slack_channel" text,
	"slack_thread_ts" text,
	"status_message_ts" text,
	"status" text NOT NULL,
	"end_reason" text,
	"arch" text,
	"model" text NOT NULL,
	"autonomous" boolean DEFAULT false NOT NULL,
	"target" double precision NOT NULL,
	"question_timeout_seconds" integer NOT NULL,
	"budget_evals" integer NOT NULL,
	"budget_steps" integer NOT NULL,
	"budget_usd" double precision NOT NULL,
	"budget_seconds" integer NOT NULL,
	"evals_used" integer DEFAULT 0 NOT NULL,
	"steps_used" integer DEFAULT 0 NOT NULL,
	"best_evaluation_id" bigint,
	"best_speedup" double precision,
	"best_speedup_vs_peer" double precision,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"input_tokens" bigint DEFAULT 0 NOT NULL,
	"output_tokens" bigint DEFAULT 0 NOT NULL,
	"cache_read_tokens" bigint DEFAULT 0 NOT NULL,
	"cache_write_tokens" bigint DEFAULT 0 NOT NULL,
	"state" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "slack_events" (
	"event_id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tool_calls" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"step_seq" integer NOT NULL,
	"tool_use_id" text NOT NULL,
	"name" text NOT NULL,
	"input" jsonb NOT NULL,
	"result" jsonb,
	"is_error" boolean DEFAULT false NOT NULL,
	"duration_ms" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "agent_steps" ADD CONSTRAINT "agent_steps_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "evaluations" ADD CONSTRAINT "evaluations_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "questions" ADD CONSTRAINT "questions_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "run_messages" ADD CONSTRAINT "run_messages_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_calls" ADD CONSTRAINT "tool_calls_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "agent_steps_seq_uq" ON "agent_steps" USING btree ("run_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "bank_entries_origin_uq" ON "bank_entries" USING btree ("origin_question_id");--> statement-breakpoint
CREATE UNIQUE INDEX "digests_channel_day_uq" ON "digests" USING btree ("channel","day");--> statement-breakpoint
CREATE UNIQUE INDEX "evaluations_run_seq_uq" ON "evaluations" USING btree ("run_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "evaluations_job_uq" ON "evaluations" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "evaluations_finished_idx" ON "evaluations" USING btree ("finished_at");--> statement-breakpoint
CREATE UNIQUE INDEX "questions_external_uq" ON "questions" USING btree ("run_id","external_id");--> statement-breakpoint
CREATE INDEX "questions_run_idx" ON "questions" USING btree ("run_id","id");--> statement-breakpoint
CREATE INDEX "questions_bank_idx" ON "questions" USING btree ("bank_id");--> statement-breakpoint
CREATE UNIQUE INDEX "run_messages_seq_uq" ON "run_messages" USING btree ("run_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "runs_slack_thread_uq" ON "runs" USING btree ("slack_channel","slack_thread_ts");--> statement-breakpoint
CREATE INDEX "runs_status_idx" ON "runs" USING btree ("status");--> statement-breakpoint
CREATE INDEX "runs_created_idx" ON "runs" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "tool_calls_use_uq" ON "tool_calls" USING btree ("run_id","tool_use_id");