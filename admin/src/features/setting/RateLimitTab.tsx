import { OptionSection } from './OptionSection';

/** Model request rate limit (per user, over a window of minutes). */
export function RateLimitTab() {
  return (
    <OptionSection
      title="feat.setting.sec.ratelimit"
      testId="sec-ratelimit"
      fields={[
        { key: 'ModelRequestRateLimitEnabled', type: 'switch' },
        { key: 'ModelRequestRateLimitDurationMinutes', type: 'number', help: 'feat.setting.help.duration' },
        { key: 'ModelRequestRateLimitCount', type: 'number', help: 'feat.setting.help.count' },
        { key: 'ModelRequestRateLimitSuccessCount', type: 'number', help: 'feat.setting.help.success_count' },
      ]}
    />
  );
}
