import { useState } from 'react';
import { Box, CircularProgress, Link, Typography } from '@mui/material';
import { useTranslate } from 'react-admin';
import { isAdmin } from '../../lib/storage';
import { useStoredUser } from '../../lib/useUser';
import { ColorTag } from '../../resources/shared/ColorTag';
import { formatTimestamp, stringColor, type TagColor } from '../../resources/shared/format';
import { JsonDialog, TextDialog } from './Dialogs';
import { Duration, LongText } from './DrawingLogPage';
import { LogPage, type LogColumn } from './LogPage';

/** Platforms with a label (feat.tasklogs.platform.*) and their colour; others show as written. */
const PLATFORM_TONES: Record<string, TagColor> = { suno: 'green', openai: 'blue' };
import { actionColor, actionKey, progressPercent, statusColor, statusKey, taskDefaultForm, taskDetail, type Row } from './taskRecords';

/** Progress as a small circle with the percentage inside. */
function ProgressCircle({ value, failed }: { value: number; failed: boolean }) {
  return (
    <Box sx={{ position: 'relative', display: 'inline-flex' }}>
      <CircularProgress variant="determinate" value={100} size={36} thickness={4} sx={{ color: 'action.hover', position: 'absolute' }} />
      <CircularProgress variant="determinate" value={value} size={36} thickness={4} color={failed ? 'error' : value >= 100 ? 'success' : 'primary'} />
      <Box sx={{ position: 'absolute', inset: 0, display: 'flex', alignItems: 'center', justifyContent: 'center' }}>
        <Typography variant="caption" sx={{ fontSize: 10 }}>
          {Math.round(value)}%
        </Typography>
      </Box>
    </Box>
  );
}

/** /task: the creative task log. */
export function TaskLogPage() {
  const translate = useTranslate();
  const user = useStoredUser();
  const admin = isAdmin(user);
  const [detail, setDetail] = useState<Row | null>(null);
  const [text, setText] = useState<string | null>(null);

  const columns: LogColumn[] = [
    { key: 'submit_time', label: 'feat.tasklogs.col.submit_time', render: (r) => formatTimestamp(r.submit_time) },
    { key: 'finish_time', label: 'feat.tasklogs.col.finish_time', render: (r) => formatTimestamp(r.finish_time) },
    {
      key: 'progress',
      label: 'feat.tasklogs.col.progress',
      render: (r) => <ProgressCircle value={progressPercent(r.progress)} failed={statusKey(r.status, true) === 'failure'} />,
    },
    { key: 'duration', label: 'feat.tasklogs.col.duration', render: (r) => <Duration submit={r.submit_time} finish={r.finish_time} unit="s" /> },
    ...(admin
      ? [
          {
            key: 'channel',
            label: 'feat.tasklogs.col.channel',
            render: (r: Row) => (r.channel_id ? <ColorTag tone={stringColor(String(r.channel_id))} label={String(r.channel_id)} /> : '-'),
          },
        ]
      : []),
    {
      key: 'platform',
      label: 'feat.tasklogs.col.platform',
      render: (r) =>
        r.platform ? (
          <ColorTag
            tone={PLATFORM_TONES[String(r.platform)] ?? 'grey'}
            label={PLATFORM_TONES[String(r.platform)] ? translate(`feat.tasklogs.platform.${String(r.platform)}`) : String(r.platform)}
          />
        ) : (
          '-'
        ),
    },
    {
      key: 'type',
      label: 'feat.tasklogs.col.type',
      render: (r) => {
        const k = actionKey(r.action, true);
        return <ColorTag tone={actionColor(r.action)} label={k ? translate(`feat.tasklogs.action.${k}`) : String(r.action || '-')} />;
      },
    },
    {
      key: 'task_id',
      label: 'feat.tasklogs.col.task_id',
      render: (r) => (
        <Link component="button" underline="hover" onClick={() => setDetail(r)} sx={{ fontFamily: 'monospace' }} data-testid="task-detail">
          {r.task_id || '-'}
        </Link>
      ),
    },
    {
      key: 'status',
      label: 'feat.tasklogs.col.status',
      render: (r) => <ColorTag tone={statusColor(r.status, true)} label={translate(`feat.tasklogs.status.${statusKey(r.status, true)}`)} />,
    },
    { key: 'fail_reason', label: 'feat.tasklogs.col.fail_reason', render: (r) => <LongText text={r.fail_reason} onOpen={setText} /> },
  ];

  return (
    <>
      <LogPage
        kind="task"
        admin={admin}
        title={translate('feat.tasklogs.task_title')}
        idLabel="feat.tasklogs.filter.task_id"
        columns={columns}
        defaults={() => taskDefaultForm()}
      />
      <JsonDialog title={translate('feat.tasklogs.detail_title')} value={detail ? taskDetail(detail) : null} onClose={() => setDetail(null)} />
      <TextDialog title={translate('feat.tasklogs.fail_title')} text={text} onClose={() => setText(null)} />
    </>
  );
}
