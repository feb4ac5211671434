import ReceiptLongIcon from '@mui/icons-material/ReceiptLong';
import { LogList } from './LogList';

/** The usage-log resource: the list only (read-only). */
export default {
  list: LogList,
  icon: ReceiptLongIcon,
  options: { label: 'resources.log.name' },
};
