-- The trace context of the ask (a W3C traceparent), kept with the request: its answer and
-- its resume, in whatever process and however much later, are spans linked to the ask.
ALTER TABLE interactions ADD COLUMN trace_context TEXT;
