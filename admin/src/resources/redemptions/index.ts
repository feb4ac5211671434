import RedeemIcon from '@mui/icons-material/Redeem';
import { RedemptionList } from './RedemptionList';

/** The redemption-code resource (admins): the list; create and edit are drawers over it. */
export default {
  list: RedemptionList,
  icon: RedeemIcon,
  options: { label: 'resources.redemption.name' },
  recordRepresentation: 'name',
};
