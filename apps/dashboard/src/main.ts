// Dashboard entry point.
const app = document.querySelector('#app');
if (app) app.textContent = 'tracehub';
