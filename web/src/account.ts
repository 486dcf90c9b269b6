// The signed-in customer's account as GET /v1/account answers it: what the dashboard's parts share.
export interface Account {
  account: { id: number; tier: string; name: string | null; email: string | null; created_at: string };
  key: OwnKey;
  limits: { per_minute: number; per_month: number | null; intervals: string[]; history_days: number | null; max_page: number; streams_per_key: number };
  usage: {
    minute: { used: number; limit: number; resets_at: string };
    month: { used: number; limit: number | null; resets_at: string };
    daily: { date: string; requests: number }[];
  };
}
export interface OwnKey {
  id: number;
  prefix: string;
  label: string | null;
  created_at: string;
  last_used_at: string | null;
  current?: boolean;
}
