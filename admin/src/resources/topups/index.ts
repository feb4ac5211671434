import ReceiptIcon from '@mui/icons-material/Receipt';
import { TopupOrderList } from './TopupOrderList';

/** The admins' read-only top-up order list (GET /api/user/topup). */
export default {
  list: TopupOrderList,
  icon: ReceiptIcon,
  options: { label: 'resources.topup_order.name' },
};
