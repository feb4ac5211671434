export { TokenList } from './TokenList';
