/** The part of autocannon 8's programmatic API bench/run.ts uses (the package ships no types). */
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  export interface RequestData {
    method: string;
    path: string;
    headers: Record<string, string>;
    body?: string | Buffer;
    [key: string]: unknown;
  }

  export interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    /** Called before each request; returns the request to send. */
    setupRequest?: (request: RequestData, context: Record<string, unknown>) => RequestData | undefined;
    /** Called with each response (the body is collected when this is set). */
    onResponse?: (
      status: number,
      body: string,
      context: Record<string, unknown>,
      headers: Record<string, string>,
    ) => void;
  }

  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
    pipelining?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    title?: string;
    requests?: RequestSpec[];
  }

  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    sent?: number;
    p2_5: number;
    p50: number;
    p75: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
  }

  export interface Result {
    title?: string;
    url: string;
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    "1xx": number;
    "2xx": number;
    "3xx": number;
    "4xx": number;
    "5xx": number;
    statusCodeStats: Record<string, { count: number }>;
    start: Date;
    finish: Date;
    connections: number;
    pipelining: number;
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
  }

  function autocannon(options: Options): Instance;
  export default autocannon;
}
