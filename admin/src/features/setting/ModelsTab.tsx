import { Box } from '@mui/material';
import { OptionSection } from './OptionSection';

/** Models settings: global (pass-through, ping), Gemini and Claude. */
export function ModelsTab() {
  return (
    <Box>
      <OptionSection
        title="feat.setting.sec.models_global"
        fields={[
          { key: 'global.pass_through_request_enabled', type: 'switch', help: 'feat.setting.help.pass_through' },
          { key: 'general_setting.ping_interval_enabled', type: 'switch' },
          {
            key: 'general_setting.ping_interval_seconds',
            type: 'number',
            disabledUnless: 'general_setting.ping_interval_enabled',
            help: 'feat.setting.help.ping',
          },
        ]}
      />
      <OptionSection
        title="feat.setting.sec.gemini"
        fields={[
          { key: 'gemini.thinking_adapter_enabled', type: 'switch' },
          { key: 'gemini.thinking_adapter_budget_tokens_percentage', type: 'number', help: 'feat.setting.help.budget' },
          { key: 'gemini.safety_settings', type: 'json', rows: 4 },
          { key: 'gemini.version_settings', type: 'json', rows: 4 },
          { key: 'gemini.supported_imagine_models', type: 'json', rows: 3 },
        ]}
      />
      <OptionSection
        title="feat.setting.sec.claude"
        fields={[
          { key: 'claude.thinking_adapter_enabled', type: 'switch' },
          { key: 'claude.thinking_adapter_budget_tokens_percentage', type: 'number', help: 'feat.setting.help.budget' },
          { key: 'claude.model_headers_settings', type: 'json', rows: 4 },
          { key: 'claude.default_max_tokens', type: 'json', rows: 4 },
        ]}
      />
    </Box>
  );
}
