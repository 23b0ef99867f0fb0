/**
 * The card form's checks in the browser, inline as a real checkout shows them (the fake checks the POST again):
 * Luhn, an expiry not past on the fake clock (`data-now`), digits only in the CVV, a cardholder name.
 */
export const CARD_SCRIPT = `(() => {
  const form = document.getElementById('card-form');
  const messages = JSON.parse(form.dataset.messages);
  const [nowYear, nowMonth] = form.dataset.now.split('-').map(Number);
  const luhn = (digits) => {
    let sum = 0;
    for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
      let digit = digits.charCodeAt(i) - 48;
      if (double) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
      sum += digit;
    }
    return sum % 10 === 0;
  };
  const checks = {
    cc_number: (value) => {
      const digits = value.replace(/[\\s-]/g, '');
      if (digits === '') return messages.cc_number.required;
      return /^\\d{12,19}$/.test(digits) && luhn(digits) ? '' : messages.cc_number.invalid;
    },
    exp: (value) => {
      if (value.trim() === '') return messages.exp.required;
      const match = /^\\s*(\\d{1,2})\\s*\\/?\\s*(\\d{2}|\\d{4})\\s*$/.exec(value);
      const month = match ? Number(match[1]) : 0;
      if (!match || month < 1 || month > 12) return messages.exp.invalid;
      const year = match[2].length === 2 ? 2000 + Number(match[2]) : Number(match[2]);
      return year * 12 + month < nowYear * 12 + nowMonth ? messages.exp.expired : '';
    },
    cvv: (value) => {
      if (value === '') return messages.cvv.required;
      return /^\\d{3,4}$/.test(value) ? '' : messages.cvv.invalid;
    },
    cardholder: (value) => (value.trim() === '' ? messages.cardholder.required : ''),
  };
  const show = (name) => {
    const input = form.elements[name];
    const error = checks[name](input.value);
    document.getElementById(name + '-error').textContent = error;
    if (error === '') input.removeAttribute('aria-invalid');
    else input.setAttribute('aria-invalid', 'true');
    return error === '';
  };
  for (const name of Object.keys(checks)) {
    form.elements[name].addEventListener('blur', () => {
      if (form.elements[name].value !== '') show(name);
    });
  }
  form.addEventListener('submit', (event) => {
    const valid = Object.keys(checks).map(show).every(Boolean);
    if (!valid) {
      event.preventDefault();
      form.querySelector('[aria-invalid="true"]').focus();
    }
  });
})();`;
