import { Box } from '@mui/material';
import { renderMarkdown } from '../lib/markdown';

/** Admin-set content (home, about): a URL is framed, HTML is rendered as is, anything else as Markdown. */
export function HtmlContent({ content, testId }: { content: string; testId?: string }) {
  const trimmed = content.trim();
  if (/^https?:\/\//i.test(trimmed) && !/\s/.test(trimmed)) {
    return <Box component="iframe" src={trimmed} data-testid={testId} sx={{ border: 0, width: '100%', minHeight: 'calc(100vh - 120px)' }} />;
  }
  if (/<[a-z][\s\S]*>/i.test(trimmed)) {
    return <Box data-testid={testId} sx={{ '& img': { maxWidth: '100%' }, lineHeight: 1.7 }} dangerouslySetInnerHTML={{ __html: trimmed }} />;
  }
  return (
    <Box
      data-testid={testId}
      sx={{ '& img': { maxWidth: '100%' }, '& pre': { overflowX: 'auto', p: 1.5, bgcolor: 'action.hover', borderRadius: 1 }, lineHeight: 1.7 }}
      dangerouslySetInnerHTML={{ __html: renderMarkdown(trimmed) }}
    />
  );
}
