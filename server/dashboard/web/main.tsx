import { render } from 'preact';
import './styles.css';

render(<p>Loading…</p>, document.getElementById('app')!);
