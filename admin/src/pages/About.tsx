import { useQuery } from '@tanstack/react-query';
import { useNotify, useTranslate } from 'react-admin';
import { Box, Card, CardContent, CircularProgress, Typography } from '@mui/material';
import { errorText } from '../lib/http';
import { HtmlContent } from '../components/HtmlContent';
import { apiQuery, asText, useQueryError } from '../resources/shared/hooks';

/** About page: GET /api/about (HTML, text or a URL to frame), else a hint. */
export function About() {
  const translate = useTranslate();
  const notify = useNotify();
  const about = useQuery(apiQuery('about', '/api/about', asText));
  useQueryError(about, (e) => notify(errorText(e, translate) || translate('app.about.load_failed'), { type: 'error' }));
  // null while loading; a failed load shows the hint.
  const content = about.data ?? (about.isError ? '' : null);
  if (content === null)
    return (
      <Box sx={{ textAlign: 'center', py: 6 }}>
        <CircularProgress />
      </Box>
    );
  if (/^https?:\/\/\S+$/i.test(content.trim())) return <HtmlContent content={content} testId="about" />;
  return (
    <Box sx={{ maxWidth: 960, mx: 'auto' }}>
      <Card variant="outlined">
        <CardContent>
          <Typography variant="h5" sx={{ fontWeight: 700, mb: 2 }}>
            {translate('app.about.title')}
          </Typography>
          {content.trim() ? <HtmlContent content={content} testId="about" /> : <Typography color="text.secondary">{translate('app.about.empty')}</Typography>}
        </CardContent>
      </Card>
    </Box>
  );
}
